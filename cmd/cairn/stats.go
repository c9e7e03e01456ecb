package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	drvbson "go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cairndb/cairn/bson"
)

// cairn stats is Cairn's mongostat: it polls serverStatus and prints one
// line per interval with the operation counts per second (from
// opcounters), the network traffic per second, the open connections,
// resident memory, and the storage engine's journal commits and fsyncs
// per second and checkpoints (from the "cairn" section), and on a member
// of a replica set its state (repl: PRI, SEC, as mongostat) and the
// replication lag (from repl.raft: lag, the largest lag of a member in
// seconds, which the primary knows; lagops, the largest in Raft log
// entries, which a secondary knows of itself). The first line shows the
// rates since the server started.

// statColumns are the columns of a stats line, with how each is derived
// from two successive serverStatus replies (prev is nil for the first).
var statColumns = []struct {
	name string
	val  func(cur, prev bson.Doc, secs float64) string
}{
	{"insert", rate("opcounters", "insert")},
	{"query", rate("opcounters", "query")},
	{"update", rate("opcounters", "update")},
	{"delete", rate("opcounters", "delete")},
	{"getmore", rate("opcounters", "getmore")},
	{"command", rate("opcounters", "command")},
	{"commits", rate("cairn", "journal", "commits")},
	{"fsyncs", rate("cairn", "journal", "fsyncs")},
	{"ckpts", gauge("cairn", "checkpoints", "count")},
	{"res", func(cur, _ bson.Doc, _ float64) string { return gauge("mem", "resident")(cur, nil, 0) + "M" }},
	{"net_in", byteRate("network", "bytesIn")},
	{"net_out", byteRate("network", "bytesOut")},
	{"conn", gauge("connections", "current")},
	{"repl", replState},
	{"lag", maxLag("lagSecs")},
	{"lagops", maxLag("lagEntries")},
	{"time", func(cur, _ bson.Doc, _ float64) string {
		if v, ok := cur.Lookup("localTime"); ok && v.Type == bson.TypeDateTime {
			return time.UnixMilli(v.DateTime()).Format("15:04:05")
		}
		return "-"
	}},
}

// replState is the member's state as mongostat's repl column shows it.
func replState(cur, _ bson.Doc, _ float64) string {
	v, ok := cur.Lookup("repl")
	if !ok || v.Type != bson.TypeDocument {
		return "-"
	}
	r := v.Document()
	if p, _ := r.Lookup("isWritablePrimary"); p.Type == bson.TypeBoolean && p.Boolean() {
		return "PRI"
	}
	if s, _ := r.Lookup("secondary"); s.Type == bson.TypeBoolean && s.Boolean() {
		return "SEC"
	}
	return "OTHER"
}

// maxLag is the largest field of repl.raft.members' entries ("-" when no
// member reports it).
func maxLag(field string) func(cur, prev bson.Doc, secs float64) string {
	return func(cur, _ bson.Doc, _ float64) string {
		v, ok := cur.LookupPath("repl", "raft", "members")
		if !ok || v.Type != bson.TypeArray {
			return "-"
		}
		best, seen := int64(0), false
		it := v.Document().Iter()
		for it.Next() {
			m := it.Element().Value
			if m.Type != bson.TypeDocument {
				continue
			}
			if f, ok := m.Document().Lookup(field); ok {
				if n, ok := f.AsInt64(); ok {
					best, seen = max(best, n), true
				}
			}
		}
		if !seen {
			return "-"
		}
		if field == "lagSecs" {
			return strconv.FormatInt(best, 10) + "s"
		}
		return strconv.FormatInt(best, 10)
	}
}

func number(d bson.Doc, path []string) (float64, bool) {
	if d == nil {
		return 0, false
	}
	v, ok := d.LookupPath(path...)
	if !ok {
		return 0, false
	}
	return v.AsFloat64()
}

func gauge(path ...string) func(cur, prev bson.Doc, secs float64) string {
	return func(cur, _ bson.Doc, _ float64) string {
		n, ok := number(cur, path)
		if !ok {
			return "-"
		}
		return strconv.FormatInt(int64(n), 10)
	}
}

// perSecond is the counter's growth per second since prev, or since the
// server started (uptime) on the first line.
func perSecond(cur, prev bson.Doc, secs float64, path []string) (float64, bool) {
	n, ok := number(cur, path)
	if !ok {
		return 0, false
	}
	if prev == nil {
		up, _ := number(cur, []string{"uptime"})
		return n / max(up, 1), true
	}
	p, _ := number(prev, path)
	return (n - p) / max(secs, 1e-3), true
}

func rate(path ...string) func(cur, prev bson.Doc, secs float64) string {
	return func(cur, prev bson.Doc, secs float64) string {
		r, ok := perSecond(cur, prev, secs, path)
		if !ok {
			return "-"
		}
		return strconv.FormatInt(int64(r+0.5), 10)
	}
}

func byteRate(path ...string) func(cur, prev bson.Doc, secs float64) string {
	return func(cur, prev bson.Doc, secs float64) string {
		r, ok := perSecond(cur, prev, secs, path)
		if !ok {
			return "-"
		}
		return humanBytes(r)
	}
}

func humanBytes(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1fg", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1fm", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1fk", b/(1<<10))
	}
	return fmt.Sprintf("%.0fb", b)
}

func runStats(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	var (
		conn              connFlags
		rows              int
		noHeaders, asJSON bool
	)
	interval := time.Second
	return tool{
		name:  "stats",
		usage: "usage: cairn stats [flags] [SECONDS]   (one line of server figures every SECONDS, default 1; like mongostat)",
		flags: func(fs *flag.FlagSet) {
			conn.register(fs)
			fs.IntVar(&rows, "rowcount", 0, "stop after this many lines (0: run until interrupted)")
			fs.IntVar(&rows, "n", 0, "shorthand for --rowcount")
			fs.BoolVar(&noHeaders, "noheaders", false, "do not print the column names")
			fs.BoolVar(&asJSON, "json", false, "print each line as a JSON object")
		},
		args: func(rest []string) error {
			if len(rest) > 1 {
				return fmt.Errorf("too many arguments: %v", rest)
			}
			if len(rest) == 1 {
				secs, err := strconv.ParseFloat(rest[0], 64)
				if err != nil || secs <= 0 {
					return fmt.Errorf("invalid interval %q", rest[0])
				}
				interval = time.Duration(secs * float64(time.Second))
			}
			return nil
		},
		work: func(ctx context.Context) error {
			err := stats(ctx, &conn, interval, rows, !noHeaders, asJSON, stdout)
			if ctx.Err() != nil {
				return nil // interrupted: the figures end there
			}
			return err
		},
	}.run(args, stderr)
}

// statLine right-aligns cells in columns at least 8 wide.
func statLine(cells []string) string {
	var b strings.Builder
	for _, c := range cells {
		b.WriteString(strings.Repeat(" ", max(8-len(c), 1)))
		b.WriteString(c)
	}
	return b.String()
}

func stats(ctx context.Context, conn *connFlags, interval time.Duration, rows int, headers, asJSON bool, out io.Writer) error {
	client, err := conn.connect(ctx, "cairn stats")
	if err != nil {
		return err
	}
	defer client.Disconnect(context.Background())
	var prev bson.Doc
	var prevAt time.Time
	for i := 0; rows == 0 || i < rows; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(interval):
			}
		}
		raw, err := client.Database("admin").RunCommand(ctx, drvbson.D{{Key: "serverStatus", Value: 1}}).Raw()
		if err != nil {
			return fmt.Errorf("serverStatus: %w", err)
		}
		cur, now := bson.Doc(raw), time.Now()
		cells := make([]string, len(statColumns))
		for j, c := range statColumns {
			cells[j] = c.val(cur, prev, now.Sub(prevAt).Seconds())
		}
		if asJSON {
			var b bson.Builder
			for j, c := range statColumns {
				b.AppendString(c.name, cells[j])
			}
			j, _ := b.Finish().MarshalExtJSON(false)
			fmt.Fprintf(out, "%s\n", j)
		} else {
			if headers && i%20 == 0 {
				names := make([]string, len(statColumns))
				for j, c := range statColumns {
					names[j] = c.name
				}
				fmt.Fprintln(out, statLine(names))
			}
			fmt.Fprintln(out, statLine(cells))
		}
		prev, prevAt = cur, now
	}
	return nil
}
