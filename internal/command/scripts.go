package command

import "github.com/cairndb/cairn/internal/js"

// scripts is the command's server-side JavaScript (internal/js): the
// engine, off with --noscripting, and the command's context, whose
// killOp, maxTimeMS and disconnect interrupt its scripts. The interpreter
// itself is created only when a script is compiled.
func scripts(c *Ctx) *js.Scripts {
	e := js.On
	if c.Env.NoScripting {
		e = js.Off
	}
	return js.NewScripts(e, c.Context)
}
