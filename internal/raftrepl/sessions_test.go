package raftrepl

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/repl"
	"github.com/cairndb/cairn/internal/session"
	"github.com/cairndb/cairn/kv"
)

// TestRecordStatement: the records a member derives from a retryable
// write's entry are those the primary wrote (session.StmtResult and
// findAndModify's image), and an entry without a statement records
// nothing; a transaction's applyOps entry records its commit.
func TestRecordStatement(t *testing.T) {
	m := openMember(t, "h:1")
	pre := docOf(func(b *bson.Builder) { b.AppendString("_id", "a"); b.AppendInt32("x", 1) })
	post := docOf(func(b *bson.Builder) { b.AppendString("_id", "a"); b.AppendInt32("x", 2) })
	cases := []struct {
		name      string
		op, image string
		stmt      bool
		pre, post bson.Doc
		want      session.StmtResult // N 0: nothing recorded
		wantImage bson.Doc
	}{
		{"insert", "i", "", true, nil, post, session.StmtResult{N: 1}, nil},
		{"update", "u", "", true, pre, post, session.StmtResult{N: 1, NModified: 1}, nil},
		{"delete", "d", "", true, pre, nil, session.StmtResult{N: 1}, nil},
		{"findAndModify pre-image", "u", session.PreImage, true, pre, post, session.StmtResult{N: 1, NModified: 1, UpdatedExisting: true, Image: session.PreImage}, pre},
		{"findAndModify post-image", "u", session.PostImage, true, pre, post, session.StmtResult{N: 1, NModified: 1, UpdatedExisting: true, Image: session.PostImage}, post},
		{"findAndModify remove", "d", session.PreImage, true, pre, nil, session.StmtResult{N: 1, Image: session.PreImage}, pre},
		{"findAndModify upsert, new", "i", session.PostImage, true, nil, post, session.StmtResult{N: 1, Image: session.PostImage}, post},
		{"not a retryable write", "u", "", false, pre, post, session.StmtResult{}, nil},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lsid := lsidDoc(byte(i + 1))
			k, _ := session.LSIDKey(lsid)
			ts := repl.MakeTimestamp(uint32(1000+i), 1)
			d := docOf(func(b *bson.Builder) {
				if tc.stmt {
					b.AppendDocument("lsid", lsid)
					b.AppendInt64("txnNumber", 7)
				}
				b.AppendString("op", tc.op)
				b.AppendString("ns", "test.c")
				if tc.stmt {
					b.AppendInt32("stmtId", 3)
				}
				b.AppendTimestamp("ts", ts.T(), ts.I())
				b.AppendInt64("t", 5)
				b.AppendDateTime("wall", 1700000000000)
				if tc.image != "" {
					b.AppendString("needsRetryImage", tc.image)
				}
			})
			if err := m.db.Update(context.Background(), func(tx *kv.Tx) error { return recordStatement(tx, d, tc.pre, tc.post) }); err != nil {
				t.Fatal(err)
			}
			err := m.db.Update(context.Background(), func(tx *kv.Tx) error {
				txn, err := session.Begin(tx, k, 7)
				if err != nil {
					return err
				}
				got, ok, err := txn.Executed(3)
				if err != nil {
					return err
				}
				if tc.want.N == 0 {
					if ok {
						t.Errorf("recorded %+v, want nothing", got)
					}
					return nil
				}
				if !ok {
					t.Fatalf("statement 3 not recorded")
				}
				if tc.op == "i" && (got.Upserted.Type != bson.TypeString || got.Upserted.StringValue() != "a") {
					t.Errorf("upserted %v, want the inserted _id", got.Upserted)
				}
				got.Upserted = bson.Value{}
				tc.want.TS = ts
				if got.N != tc.want.N || got.NModified != tc.want.NModified || got.UpdatedExisting != tc.want.UpdatedExisting || got.Image != tc.want.Image || got.TS != tc.want.TS {
					t.Errorf("recorded %+v, want %+v", got, tc.want)
				}
				if txn.LastOpTime != ts {
					t.Errorf("lastWriteOpTime %v, want %v", txn.LastOpTime, ts)
				}
				if tc.wantImage != nil {
					img, err := txn.Image(tc.image)
					if err != nil {
						return err
					}
					if !bytes.Equal(img, tc.wantImage) {
						t.Errorf("image %s, want %s", img, tc.wantImage)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("transaction commit", func(t *testing.T) {
		lsid := lsidDoc(99)
		k, _ := session.LSIDKey(lsid)
		ts := repl.MakeTimestamp(2000, 1)
		d := docOf(func(b *bson.Builder) {
			b.AppendDocument("lsid", lsid)
			b.AppendInt64("txnNumber", 4)
			b.AppendString("op", "c")
			b.AppendString("ns", "admin.$cmd")
			b.StartDocument("o")
			b.StartArray("applyOps")
			b.End()
			b.End()
			b.AppendTimestamp("ts", ts.T(), ts.I())
			b.AppendInt64("t", 5)
			b.AppendDateTime("wall", time.Now().UnixMilli())
		})
		if err := m.db.Update(context.Background(), func(tx *kv.Tx) error { return recordStatement(tx, d, nil, nil) }); err != nil {
			t.Fatal(err)
		}
		if err := m.db.View(func(tx *kv.Tx) error {
			n, at, ok, err := session.CommittedTxn(tx, k)
			if err == nil && (!ok || n != 4 || at != ts) {
				t.Errorf("committed transaction %d at %v (%v), want 4 at %v", n, at, ok, ts)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
	})
}

func docOf(fn func(*bson.Builder)) bson.Doc {
	var b bson.Builder
	fn(&b)
	return b.Finish()
}

// lsidDoc is an lsid {id, uid} whose id bytes are all n.
func lsidDoc(n byte) bson.Doc {
	return docOf(func(b *bson.Builder) {
		b.AppendBinary("id", 4, bytes.Repeat([]byte{n}, 16))
		b.AppendBinary("uid", 0, bytes.Repeat([]byte{n}, 32))
	})
}
