package command

import (
	"fmt"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/concern"
	"github.com/cairndb/cairn/internal/exec"
)

// The default read and write concerns' commands (internal/concern keeps
// the defaults).

func rwDefaults(e *Env) (concern.RWDefaults, error) {
	if e == nil || e.KV == nil { // unit tests without an engine
		return concern.RWDefaults{}, nil
	}
	return e.RW.Get(e.KV)
}

// defaultWriteConcern returns the global default write concern document
// (nil if none was set).
func defaultWriteConcern(e *Env) (bson.Doc, error) {
	d, err := rwDefaults(e)
	return d.WriteConcern, err
}

// getDefaultRWConcern reports the defaults.
func getDefaultRWConcern(c *Ctx) error {
	if err := newArgs(c).Check("inMemory"); err != nil {
		return err
	}
	d, err := rwDefaults(c.Env)
	if err != nil {
		return err
	}
	concern.AppendDefaults(c.Reply, d, c.Env.Repl != nil)
	return nil
}

// setDefaultRWConcern sets the global default read and/or write concern.
// An empty document unsets one.
func setDefaultRWConcern(c *Ctx) error {
	if err := newArgs(c).Check("defaultReadConcern", "defaultWriteConcern"); err != nil {
		return err
	}
	rv, hasRead := c.Body.Lookup("defaultReadConcern")
	wv, hasWrite := c.Body.Lookup("defaultWriteConcern")
	if !hasRead && !hasWrite {
		_, err := concern.Next(concern.RWDefaults{}, rv, false, wv, false, false)
		return err
	}
	cur, err := rwDefaults(c.Env)
	if err != nil {
		return err
	}
	next, err := concern.Next(cur, rv, hasRead, wv, hasWrite, c.Env.Repl != nil)
	if err != nil {
		return err
	}
	if err := c.WriteTx(exec.Sync, func(tx *exec.Tx) error { return concern.Store(tx, next) }); err != nil {
		return fmt.Errorf("setDefaultRWConcern: %w", err)
	}
	c.Env.RW.Set(next)
	concern.AppendDefaults(c.Reply, next, c.Env.Repl != nil)
	return nil
}
