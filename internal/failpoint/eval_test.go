package failpoint

import (
	"context"
	"testing"

	dbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/internal/mongoerr"
)

// TestBeforeAfter: what failCommand does to a matching command before it
// runs (error with labels, closed connection) and to its reply after.
func TestBeforeAfter(t *testing.T) {
	tests := []struct {
		name      string
		data      dbson.D
		req       Request
		wantCode  int32
		wantOut   Outcome
		wantAfter string // the reply's ext JSON after After, "" for unchanged
	}{
		{name: "error, retryable write labelled",
			data:     dbson.D{{Key: "failCommands", Value: dbson.A{"insert"}}, {Key: "errorCode", Value: 91}},
			req:      Request{Target: Target{Names: []string{"insert"}}, Cmd: "insert", TxnNumber: true},
			wantCode: 91},
		{name: "own labels",
			data:     dbson.D{{Key: "failCommands", Value: dbson.A{"insert"}}, {Key: "errorCode", Value: 2}, {Key: "errorLabels", Value: dbson.A{"L"}}},
			req:      Request{Target: Target{Names: []string{"insert"}}, Cmd: "insert"},
			wantCode: 2, wantOut: Outcome{Labelled: true}},
		{name: "close connection",
			data:     dbson.D{{Key: "failCommands", Value: dbson.A{"find"}}, {Key: "closeConnection", Value: true}},
			req:      Request{Target: Target{Names: []string{"find"}}, Cmd: "find"},
			wantCode: mongoerr.FailCommandCloseConnection, wantOut: Outcome{CloseConnection: true}},
		{name: "other command untouched",
			data: dbson.D{{Key: "failCommands", Value: dbson.A{"find"}}, {Key: "errorCode", Value: 2}},
			req:  Request{Target: Target{Names: []string{"insert"}}, Cmd: "insert"}},
		{name: "write concern error after",
			data:      dbson.D{{Key: "failCommands", Value: dbson.A{"insert"}}, {Key: "writeConcernError", Value: dbson.D{{Key: "code", Value: 91}, {Key: "errmsg", Value: "x"}}}},
			req:       Request{Target: Target{Names: []string{"insert"}}, Cmd: "insert", TxnNumber: true},
			wantAfter: `{"n":1,"writeConcernError":{"code":91,"errmsg":"x"},"errorLabels":["RetryableWriteError"]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry(Defs()...)
			if _, err := configure(t, r, dbson.D{{Key: "configureFailPoint", Value: FailCommand}, {Key: "mode", Value: "alwaysOn"}, {Key: "data", Value: tc.data}}); err != nil {
				t.Fatal(err)
			}
			out, err := r.Before(context.Background(), &tc.req)
			var code int32
			if err != nil {
				code = mongoerr.As(err).Code
			}
			if code != tc.wantCode || out != tc.wantOut {
				t.Fatalf("Before: %+v, %v; want %+v, code %d", out, err, tc.wantOut, tc.wantCode)
			}
			reply := doc(t, dbson.D{{Key: "n", Value: 1}})
			after := r.After(&tc.req, reply, 0)
			want := tc.wantAfter
			if want == "" {
				want = `{"n":1}`
			}
			if j, _ := after.MarshalExtJSON(false); string(j) != want {
				t.Errorf("After: %s, want %s", j, want)
			}
		})
	}
}

// TestBeforeBlockCancelled: a blocked command ends with its context.
func TestBeforeBlockCancelled(t *testing.T) {
	r := NewRegistry(Defs()...)
	if _, err := configure(t, r, dbson.D{{Key: "configureFailPoint", Value: FailCommand}, {Key: "mode", Value: "alwaysOn"},
		{Key: "data", Value: dbson.D{{Key: "failCommands", Value: dbson.A{"ping"}}, {Key: "blockConnection", Value: true}, {Key: "blockTimeMS", Value: 60000}}}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := r.Before(ctx, &Request{Target: Target{Names: []string{"ping"}}, Cmd: "ping"})
	if err == nil {
		t.Fatal("a cancelled block returned no error")
	}
}
