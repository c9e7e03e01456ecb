package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	drvbson "go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/bson"
)

// exportOptions are cairn export's settings; the flags and their defaults
// are mongoexport's (TSV is Cairn's addition, the counterpart of
// cairn import --type tsv).
type exportOptions struct {
	conn         connFlags
	db, coll     string
	typ          string
	jsonFormat   string
	fields       string
	fieldFile    string
	query        string
	sort         string
	limit, skip  int64
	out          string
	jsonArray    bool
	pretty       bool
	noHeaderLine bool
	noProgress   bool
}

func (o *exportOptions) register(fs *flag.FlagSet) {
	o.conn.register(fs)
	stringFlag(fs, &o.db, "db", "d", "test", "database to export from")
	stringFlag(fs, &o.coll, "collection", "c", "", "collection to export (required)")
	fs.StringVar(&o.typ, "type", "json", "output format: json, csv or tsv")
	fs.StringVar(&o.jsonFormat, "jsonFormat", "relaxed", "Extended JSON flavour: relaxed or canonical")
	stringFlag(fs, &o.fields, "fields", "f", "", "comma-separated fields to export (required for CSV/TSV)")
	fs.StringVar(&o.fieldFile, "fieldFile", "", "file with one field name per line")
	stringFlag(fs, &o.query, "query", "q", "", "filter, as Extended JSON: '{\"x\": {\"$gt\": 1}}'")
	fs.StringVar(&o.sort, "sort", "", "sort order, as Extended JSON: '{\"x\": 1}'")
	fs.Int64Var(&o.limit, "limit", 0, "export at most this many documents (0: all)")
	fs.Int64Var(&o.skip, "skip", 0, "skip this many documents first")
	stringFlag(fs, &o.out, "out", "o", "", "output file (default: standard output)")
	fs.BoolVar(&o.jsonArray, "jsonArray", false, "write one JSON array instead of one document per line")
	fs.BoolVar(&o.pretty, "pretty", false, "indent the JSON output")
	fs.BoolVar(&o.noHeaderLine, "noHeaderLine", false, "CSV/TSV: leave out the line of field names")
	fs.BoolVar(&o.noProgress, "noProgress", false, "do not show the progress bar")
}

func runExport(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	var o exportOptions
	return tool{
		name:  "export",
		usage: "usage: cairn export --db DB --collection COLL [flags]   (mongoexport's flags)",
		flags: o.register,
		work: func(ctx context.Context) error {
			n, err := exportData(ctx, &o, stdout, stderr)
			fmt.Fprintf(stderr, "exported %d record(s)\n", n)
			return err
		},
	}.run(args, stderr)
}

// parseJSONFlag parses a flag's Extended JSON document ("" is nil).
func parseJSONFlag(name, s string) (drvbson.Raw, error) {
	if s == "" {
		return nil, nil
	}
	d, err := bson.UnmarshalExtJSON([]byte(s), false)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", name, err)
	}
	return drvbson.Raw(d), nil
}

func (o *exportOptions) fieldNames() ([]string, error) {
	switch {
	case o.fields != "" && o.fieldFile != "":
		return nil, errors.New("give --fields or --fieldFile, not both")
	case o.fields != "":
		return strings.Split(o.fields, ","), nil
	case o.fieldFile != "":
		b, err := os.ReadFile(o.fieldFile)
		if err != nil {
			return nil, fmt.Errorf("reading --fieldFile: %w", err)
		}
		var names []string
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				names = append(names, l)
			}
		}
		return names, nil
	}
	return nil, nil
}

func exportData(ctx context.Context, o *exportOptions, stdout, stderr io.Writer) (int64, error) {
	if o.coll == "" {
		return 0, errors.New("--collection is required")
	}
	fields, err := o.fieldNames()
	if err != nil {
		return 0, err
	}
	switch o.typ {
	case "json":
		if o.noHeaderLine {
			return 0, errors.New("--noHeaderLine applies to CSV and TSV only")
		}
	case "csv", "tsv":
		if len(fields) == 0 {
			return 0, errors.New("CSV and TSV export need --fields or --fieldFile")
		}
		if o.jsonArray || o.pretty {
			return 0, errors.New("--jsonArray and --pretty apply to JSON only")
		}
	default:
		return 0, fmt.Errorf("unknown --type %q (json, csv or tsv)", o.typ)
	}
	if o.jsonFormat != "relaxed" && o.jsonFormat != "canonical" {
		return 0, fmt.Errorf("unknown --jsonFormat %q (relaxed or canonical)", o.jsonFormat)
	}
	filter, err := parseJSONFlag("query", o.query)
	if err != nil {
		return 0, err
	}
	if filter == nil {
		filter = drvbson.Raw(bson.EmptyDoc)
	}
	sort, err := parseJSONFlag("sort", o.sort)
	if err != nil {
		return 0, err
	}

	client, err := o.conn.connect(ctx, "cairn export")
	if err != nil {
		return 0, err
	}
	defer client.Disconnect(context.Background())
	coll := client.Database(o.db).Collection(o.coll)

	find := options.Find().SetSkip(o.skip).SetLimit(o.limit)
	if sort != nil {
		find.SetSort(sort)
	}
	if len(fields) > 0 {
		find.SetProjection(drvbson.Raw(projectionOf(fields)))
	}
	total := int64(-1)
	if o.query == "" && !o.noProgress {
		if n, err := coll.EstimatedDocumentCount(ctx); err == nil {
			total = max(n-o.skip, 0)
			if o.limit > 0 {
				total = min(total, o.limit)
			}
		}
	}
	cur, err := coll.Find(ctx, filter, find)
	if err != nil {
		return 0, fmt.Errorf("querying %s.%s: %w", o.db, o.coll, err)
	}
	defer cur.Close(context.Background())

	out := stdout
	if o.out != "" && o.out != "-" {
		f, err := os.Create(o.out)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		out = f
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	var n atomic.Int64
	bar := startProgress(stderr, !o.noProgress, fmt.Sprintf("%s.%s", o.db, o.coll), total, &n, &n)
	err = writeExport(ctx, o, fields, cur, bw, &n)
	bar.finish()
	if ferr := bw.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	if f, ok := out.(*os.File); ok && out != stdout {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}
	return n.Load(), err
}

// projectionOf includes the fields, leaving out any whose parent path is
// also listed ("a" covers "a.1", which together would be a path collision).
func projectionOf(fields []string) bson.Doc {
	listed := map[string]bool{}
	for _, f := range fields {
		listed[f] = true
	}
	var p bson.Builder
	done := map[string]bool{}
outer:
	for _, f := range fields {
		for i := range len(f) {
			if f[i] == '.' && listed[f[:i]] {
				continue outer
			}
		}
		if !done[f] {
			done[f] = true
			p.AppendInt32(f, 1)
		}
	}
	return p.Finish()
}

// writeExport writes the cursor's documents in the chosen format.
func writeExport(ctx context.Context, o *exportOptions, fields []string, cur *mongo.Cursor, w *bufio.Writer, n *atomic.Int64) error {
	var tab *csv.Writer
	switch o.typ {
	case "csv":
		tab = csv.NewWriter(w)
	case "json":
		if o.jsonArray {
			w.WriteByte('[')
		}
	}
	if o.typ != "json" && !o.noHeaderLine {
		if err := writeRow(tab, w, fields); err != nil {
			return err
		}
	}
	canonical := o.jsonFormat == "canonical"
	row := make([]string, len(fields))
	for cur.Next(ctx) {
		d := bson.Doc(cur.Current)
		if o.typ == "json" {
			j, err := d.MarshalExtJSON(canonical)
			if err != nil {
				return err
			}
			if o.jsonArray && n.Load() > 0 {
				w.WriteByte(',')
			}
			if o.pretty {
				var buf bytes.Buffer
				if err := json.Indent(&buf, j, "", "  "); err != nil {
					return err
				}
				j = buf.Bytes()
			}
			w.Write(j)
			if !o.jsonArray {
				w.WriteByte('\n')
			}
		} else {
			for i, f := range fields {
				v, ok := d.LookupPath(strings.Split(f, ".")...)
				if !ok {
					row[i] = ""
					continue
				}
				s, err := cellText(v)
				if err != nil {
					return err
				}
				if tab == nil && strings.ContainsAny(s, "\t\n\r") {
					id, _ := d.Lookup("_id")
					return fmt.Errorf("document %s: field %s holds a tab or line break, which TSV cannot represent; export it as CSV or JSON", id, f)
				}
				row[i] = s
			}
			if err := writeRow(tab, w, row); err != nil {
				return err
			}
		}
		n.Add(1)
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("reading the cursor: %w", err)
	}
	if o.typ == "json" && o.jsonArray {
		w.WriteString("]\n")
	}
	if tab != nil {
		tab.Flush()
		return tab.Error()
	}
	return nil
}

func writeRow(tab *csv.Writer, w *bufio.Writer, row []string) error {
	if tab != nil {
		return tab.Write(row)
	}
	_, err := w.WriteString(strings.Join(row, "\t") + "\n")
	return err
}

// cellText renders a value for a CSV/TSV cell as mongoexport does:
// strings as they are, numbers and booleans plainly, dates in ISO-8601
// with milliseconds, ObjectIds as ObjectId(hex), null as an empty cell,
// and documents, arrays and the other types as relaxed Extended JSON.
func cellText(v bson.Value) (string, error) {
	switch v.Type {
	case bson.TypeString:
		return v.StringValue(), nil
	case bson.TypeInt32:
		return strconv.FormatInt(int64(v.Int32()), 10), nil
	case bson.TypeInt64:
		return strconv.FormatInt(v.Int64(), 10), nil
	case bson.TypeDouble:
		return fmt.Sprint(v.Double()), nil
	case bson.TypeBoolean:
		return strconv.FormatBool(v.Boolean()), nil
	case bson.TypeNull, bson.TypeUndefined:
		return "", nil
	case bson.TypeDateTime:
		return time.UnixMilli(v.DateTime()).UTC().Format("2006-01-02T15:04:05.000Z"), nil
	case bson.TypeObjectID:
		id := v.ObjectID()
		return "ObjectId(" + hex.EncodeToString(id[:]) + ")", nil
	case bson.TypeDecimal128:
		return bson.FormatDecimal128(v.Decimal128()), nil
	}
	j, err := bson.AppendExtJSON(nil, v, false)
	return string(j), err
}
