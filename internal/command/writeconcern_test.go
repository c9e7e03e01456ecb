package command

import (
	"context"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/kv"
)

func ctxWith(t *testing.T, body dbson.D) *Ctx {
	t.Helper()
	raw, err := dbson.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return &Ctx{Context: context.Background(), Name: body[0].Key, Body: bson.Doc(raw)}
}

func TestParseWriteConcern(t *testing.T) {
	cases := []struct {
		name   string
		wc     any
		unack  bool
		dur    kv.Durability
		errNum int32
	}{
		{"default", nil, false, kv.Lazy, 0},
		{"w1", dbson.D{{Key: "w", Value: 1}}, false, kv.Lazy, 0},
		{"w0", dbson.D{{Key: "w", Value: 0}}, true, kv.Lazy, 0},
		{"w0 j", dbson.D{{Key: "w", Value: 0}, {Key: "j", Value: true}}, false, kv.Sync, 0},
		{"j true", dbson.D{{Key: "j", Value: true}}, false, kv.Sync, 0},
		{"majority", dbson.D{{Key: "w", Value: "majority"}}, false, kv.Sync, 0},
		{"wtimeout ignored", dbson.D{{Key: "w", Value: 1}, {Key: "wtimeout", Value: 100}}, false, kv.Lazy, 0},
		{"w2 on standalone", dbson.D{{Key: "w", Value: 2}}, false, 0, mongoerr.BadValue},
		{"unknown mode", dbson.D{{Key: "w", Value: "dc1"}}, false, 0, 79},
		{"negative w", dbson.D{{Key: "w", Value: -1}}, false, 0, mongoerr.FailedToParse},
		{"bad j", dbson.D{{Key: "j", Value: "yes"}}, false, 0, mongoerr.FailedToParse},
		{"unknown field", dbson.D{{Key: "x", Value: 1}}, false, 0, mongoerr.FailedToParse},
		{"not a document", 5, false, 0, mongoerr.TypeMismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := dbson.D{{Key: "insert", Value: "c"}}
			if tc.wc != nil {
				body = append(body, dbson.E{Key: "writeConcern", Value: tc.wc})
			}
			wc, err := parseWriteConcern(ctxWith(t, body))
			if tc.errNum != 0 {
				if err == nil || mongoerr.As(err).Code != tc.errNum {
					t.Fatalf("err = %v, want code %d", err, tc.errNum)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if wc.unacknowledged() != tc.unack || wc.durability() != tc.dur {
				t.Fatalf("unack=%v durability=%v, want %v %v", wc.unacknowledged(), wc.durability(), tc.unack, tc.dur)
			}
		})
	}
}
