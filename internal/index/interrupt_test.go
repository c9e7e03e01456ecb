package index

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// TestPrepareInterrupted checks that a Tree whose context has ended
// refuses to prepare a change, inserting or deleting, with MongoDB's error
// for the reason, and that a live context changes nothing.
func TestPrepareInterrupted(t *testing.T) {
	ws := make([]string, 20_000)
	arr := make(dbson.A, len(ws))
	for i := range ws {
		ws[i] = "w" + strconv.Itoa(i)
		arr[i] = int32(i)
	}
	big := doc(t, dbson.D{{Key: "_id", Value: 1}, {Key: "t", Value: strings.Join(ws, " ")}, {Key: "a", Value: arr}})
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer cancel2()
	contexts := []struct {
		name string
		ctx  context.Context
		code int32 // 0: no error
	}{
		{"live", context.Background(), 0},
		{"killed", cancelled, mongoerr.Interrupted},
		{"maxTimeMS", expired, mongoerr.MaxTimeMSExpired},
	}
	specs := []struct {
		name string
		key  dbson.D
		keys int
	}{
		{"text", dbson.D{{Key: "t", Value: "text"}}, len(ws)},
		{"multikey", dbson.D{{Key: "a", Value: 1}}, len(arr)},
		{"wildcard", dbson.D{{Key: "a.$**", Value: 1}}, len(arr)},
	}
	for _, sp := range specs {
		s, err := Parse(doc(t, dbson.D{{Key: "key", Value: sp.key}, {Key: "name", Value: "x"}}))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range contexts {
			for _, op := range []string{"insert", "delete"} {
				x := &Tree{Spec: s, ns: "t.c"}
				x.SetContext(c.ctx)
				var old, updated bson.Doc
				if op == "insert" {
					updated = big
				} else {
					old = big
				}
				ch, err := x.Prepare(old, updated, []byte{1})
				if c.code == 0 {
					if err != nil {
						t.Fatalf("%s %s %s: %v", sp.name, c.name, op, err)
					}
					if a, r := ch.Counts(); a+r != sp.keys {
						t.Fatalf("%s %s %s: %d added, %d removed, want %d", sp.name, c.name, op, a, r, sp.keys)
					}
					continue
				}
				if e := mongoerr.As(err); e == nil || e.Code != c.code {
					t.Fatalf("%s %s %s: error %v, want code %d", sp.name, c.name, op, err, c.code)
				}
			}
		}
	}
}
