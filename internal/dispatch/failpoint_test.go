package dispatch

import (
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/failpoint"
)

// TestFailCommandLabels: the labels of a failCommand error without its own
// errorLabels follow mongod's rule (RetryableWriteError for a retriable
// code on a retryable write).
func TestFailCommandLabels(t *testing.T) {
	tests := []struct {
		name       string
		body       dbson.D
		data       dbson.D
		code, wc   int32
		have       dbson.A
		wantLabels string // "" for none
	}{
		{"retryable write, retriable code", dbson.D{{Key: "insert", Value: "c"}, {Key: "txnNumber", Value: int64(1)}}, nil, 91, 0, nil, "RetryableWriteError"},
		{"retryable write, other code", dbson.D{{Key: "insert", Value: "c"}, {Key: "txnNumber", Value: int64(1)}}, nil, 2, 0, nil, ""},
		{"no txnNumber", dbson.D{{Key: "insert", Value: "c"}}, nil, 91, 0, nil, ""},
		{"transaction statement", dbson.D{{Key: "insert", Value: "c"}, {Key: "txnNumber", Value: int64(1)}, {Key: "autocommit", Value: false}}, nil, 91, 0, nil, "TransientTransactionError"},
		{"transaction statement, write conflict", dbson.D{{Key: "insert", Value: "c"}, {Key: "txnNumber", Value: int64(1)}, {Key: "autocommit", Value: false}}, nil, 112, 0, nil, "TransientTransactionError"},
		{"transaction statement, other code", dbson.D{{Key: "insert", Value: "c"}, {Key: "txnNumber", Value: int64(1)}, {Key: "autocommit", Value: false}}, nil, 11000, 0, nil, ""},
		{"commit, retriable code", dbson.D{{Key: "commitTransaction", Value: 1}, {Key: "txnNumber", Value: int64(1)}, {Key: "autocommit", Value: false}}, nil, 91, 0, nil, "RetryableWriteError"},
		{"write concern error code", dbson.D{{Key: "insert", Value: "c"}, {Key: "txnNumber", Value: int64(1)}}, nil, 0, 189, nil, "RetryableWriteError"},
		{"labels kept, label added once", dbson.D{{Key: "insert", Value: "c"}, {Key: "txnNumber", Value: int64(1)}}, nil, 0, 189, dbson.A{"X", "RetryableWriteError"}, "X,RetryableWriteError"},
		{"data labels replace the rule", dbson.D{{Key: "insert", Value: "c"}, {Key: "txnNumber", Value: int64(1)}}, dbson.D{{Key: "errorLabels", Value: dbson.A{"Mine"}}}, 91, 0, nil, "Mine"},
		{"empty data labels: none", dbson.D{{Key: "insert", Value: "c"}, {Key: "txnNumber", Value: int64(1)}}, dbson.D{{Key: "errorLabels", Value: dbson.A{}}}, 91, 0, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw, _ := dbson.Marshal(tc.body)
			c := &Ctx{Body: bson.Doc(raw), Name: tc.body[0].Key, Env: &Env{}}
			data := tc.data
			if data == nil {
				data = dbson.D{}
			}
			cfgRaw, _ := dbson.Marshal(dbson.D{{Key: "configureFailPoint", Value: "failCommand"}, {Key: "mode", Value: "alwaysOn"}, {Key: "data", Value: data}})
			r := failpoint.NewRegistry(failpoint.Defs()...)
			if _, err := r.Configure(bson.Doc(cfgRaw)); err != nil {
				t.Fatal(err)
			}
			cfg, _ := r.Point(failpoint.FailCommand).Eval(nil)
			var have bson.Doc
			if tc.have != nil {
				_, b, _ := dbson.MarshalValue(tc.have)
				have = bson.Doc(b)
			}
			got := c.failRequest(&Command{Name: c.Name}).Labels(cfg.Parsed.(*failpoint.CommandData), tc.code, tc.wc, have)
			s := labelList(got)
			if s != tc.wantLabels {
				t.Errorf("labels %q, want %q", s, tc.wantLabels)
			}
		})
	}
}

// labelList joins an errorLabels array with commas.
func labelList(a bson.Doc) string {
	s := ""
	it := a.Iter()
	for it.Next() {
		if s != "" {
			s += ","
		}
		s += it.Element().Value.StringValue()
	}
	return s
}
