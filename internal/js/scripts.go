package js

import (
	"context"
	"sync"
)

// Scripts gives an operation's parsers its interpreter: the engine, the
// operation's context, and the one Session every script of the operation
// shares (created when the first script is compiled, so that commands
// without scripts pay nothing). A nil *Scripts is a context without
// server-side JavaScript.
type Scripts struct {
	Engine *Engine
	Ctx    context.Context

	once sync.Once
	sess *Session
	err  error
}

// NewScripts returns the scripts of one operation.
func NewScripts(e *Engine, ctx context.Context) *Scripts { return &Scripts{Engine: e, Ctx: ctx} }

// Enabled reports whether scripts may run (false: --noscripting).
func (s *Scripts) Enabled() bool { return s != nil && s.Engine.Enabled() }

// Session returns the operation's interpreter.
func (s *Scripts) Session() (*Session, error) {
	s.once.Do(func() { s.sess, s.err = s.Engine.NewSession(s.Ctx) })
	return s.sess, s.err
}
