package dispatch

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/opctx"
)

// Writer opens a collection writer for this command, honouring its
// bypassDocumentValidation (exec.AggCommand, exec.WriteCmd).
func (c *Ctx) Writer(tx *exec.Tx, coll *catalog.Collection) (*exec.CollWriter, error) {
	if c.Env.Oplog != nil && coll.IsOplog() {
		// In replica-set mode only the oplog's own writer appends to it; a
		// standalone's local.oplog.rs is an ordinary capped collection
		// whose inserts need a Timestamp ts.
		return nil, mongoerr.New(mongoerr.InvalidNamespace, "cannot write to '%s'", coll.Namespace())
	}
	w, err := exec.OpenWriter(tx, coll)
	if err != nil {
		return nil, err
	}
	if v, ok := c.Body.Lookup("bypassDocumentValidation"); ok && v.Truthy() {
		w.Bypass = true
	}
	w.Figs = WriteFiguresOf(c)
	w.C = c
	w.Oplog = c.Env.Oplog
	for _, x := range w.Indexes {
		x.SetContext(c) // killOp and maxTimeMS interrupt index key generation
	}
	return w, nil
}

// WriteFigures are the command's write figures (exec.WriteCmd; nil: none
// kept).
func (c *Ctx) WriteFigures() *exec.WriteFigures { return WriteFiguresOf(c) }

// WarnInvalid logs a document that fails a validator whose
// validationAction is "warn", as mongod does (STORAGE, id 20294); extra
// holds the errInfo the write would have failed with.
func (c *Ctx) WarnInvalid(ns string, doc, extra bson.Doc) {
	if c.Env.Log == nil {
		return
	}
	errInfo, _ := extra.Lookup("errInfo")
	c.Env.Log.Warn("Document would fail validation", "c", "STORAGE", "id", 20294, "ctx", ConnCtxName(c),
		"namespace", ns, "document", opctx.LoggedDoc(doc), "errInfo", opctx.LoggedDoc(errInfo.Document()))
}
