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

// target is a server the queries run on and where its results go.
type target struct {
	srv   *cairnServer
	cl    *mongo.Client
	out   *[]queryResult
	label string // printed before its result lines
}

// runQueries runs each selected pipeline c.runs times on test.hits of every
// target and, with an oracle, checks each target's first answer. With two
// targets, the servers take turns run by run in the order A B, B A, A B ...,
// so that both see the same phases of a shared machine.
func runQueries(ctx context.Context, c *config, targets []target, or *oracle, rep *report) error {
	ps, err := pipelines()
	if err != nil {
		return err
	}
	for _, q := range c.queries {
		res := make([]queryResult, len(targets))
		first := make([][]row, len(targets))
		for i := range res {
			res[i].Query = q
		}
		for r := 0; r < c.runs; r++ {
			for k := range targets {
				i := k
				if r%2 == 1 {
					i = len(targets) - 1 - k
				}
				t, res := targets[i], &res[i]
				if res.Error != "" {
					continue
				}
				t0, c0 := time.Now(), t.srv.cpu()
				docs, err := aggregate(ctx, t.cl.Database("test").Collection("hits"), ps[q])
				d := time.Since(t0).Seconds()
				if c0 > 0 {
					res.CPU = append(res.CPU, t.srv.cpu()-c0)
				}
				if err != nil {
					res.Error = err.Error()
					res.Times = append(res.Times, -1)
					continue
				}
				res.Times = append(res.Times, d)
				if r == 0 {
					first[i] = docs
				}
			}
		}
		for i, t := range targets {
			if or != nil && res[i].Error == "" {
				res[i].Checked = true
				res[i].Mismatch = or.expect(q).check(first[i])
				if res[i].Mismatch != "" {
					rep.Mismatches++
				}
			}
			*t.out = append(*t.out, res[i])
			fmt.Println(t.label + res[i].line())
		}
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
