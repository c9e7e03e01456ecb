package main

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// runQueries runs each selected pipeline c.runs times on test.hits and, with
// an oracle, checks the first run's answer.
func runQueries(ctx context.Context, c *config, srv *cairnServer, cl *mongo.Client, or *oracle, rep *report) error {
	ps, err := pipelines()
	if err != nil {
		return err
	}
	coll := cl.Database("test").Collection("hits")
	for _, q := range c.queries {
		res := queryResult{Query: q}
		var first []row
		for r := 0; r < c.runs; r++ {
			t0, c0 := time.Now(), srv.cpu()
			docs, err := aggregate(ctx, coll, ps[q])
			d := time.Since(t0).Seconds()
			if c0 > 0 {
				res.CPU = append(res.CPU, srv.cpu()-c0)
			}
			if err != nil {
				res.Error = err.Error()
				res.Times = append(res.Times, -1)
				break
			}
			res.Times = append(res.Times, d)
			if r == 0 {
				first = docs
			}
		}
		if or != nil && res.Error == "" {
			res.Checked = true
			res.Mismatch = or.expect(q).check(first)
			if res.Mismatch != "" {
				rep.Mismatches++
			}
		}
		rep.Queries = append(rep.Queries, res)
		fmt.Println(res.line())
	}
	return nil
}

func aggregate(ctx context.Context, coll *mongo.Collection, p bson.A) ([]row, error) {
	cur, err := coll.Aggregate(ctx, p, options.Aggregate().SetAllowDiskUse(true))
	if err != nil {
		return nil, err
	}
	defer cur.Close(ctx)
	var out []row
	for cur.Next(ctx) {
		out = append(out, normalizeDoc(cur.Current))
	}
	return out, cur.Err()
}

// queryResult is one query's times (seconds; -1 for a failed run) and check.
type queryResult struct {
	Query    int       `json:"query"`
	Times    []float64 `json:"times"`
	CPU      []float64 `json:"cpu,omitempty"` // the server's CPU seconds per run (with -inproc, this process's)
	Error    string    `json:"error,omitempty"`
	Checked  bool      `json:"checked"`
	Mismatch string    `json:"mismatch,omitempty"`
}

// hot is the best of the runs after the first (the first when only one ran).
func (q queryResult) hot() float64 {
	if q.Error != "" || len(q.Times) == 0 {
		return -1
	}
	if len(q.Times) == 1 {
		return q.Times[0]
	}
	best := q.Times[1]
	for _, t := range q.Times[2:] {
		best = min(best, t)
	}
	return best
}

func (q queryResult) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Q%d: [", q.Query)
	for i, t := range q.Times {
		if i > 0 {
			b.WriteString(", ")
		}
		if t < 0 {
			b.WriteString("null")
		} else {
			fmt.Fprintf(&b, "%.3f", t)
		}
	}
	b.WriteString("]")
	if len(q.CPU) > 0 {
		fmt.Fprintf(&b, " cpu %.3f", q.CPU[len(q.CPU)-1])
	}
	switch {
	case q.Error != "":
		fmt.Fprintf(&b, " error: %s", q.Error)
	case q.Mismatch != "":
		fmt.Fprintf(&b, " MISMATCH: %s", q.Mismatch)
	case q.Checked:
		b.WriteString(" ok")
	}
	return b.String()
}

// cpuTime is this process's user+system CPU time in seconds.
func cpuTime() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
