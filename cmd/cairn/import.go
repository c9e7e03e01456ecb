package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/cairndb/cairn/bson"
)

// importOptions are cairn import's settings; the flags and their defaults
// are mongoimport's.
type importOptions struct {
	conn             connFlags
	db, coll         string
	typ              string // json, csv or tsv
	file             string // "" or "-": standard input
	fields           string
	fieldFile        string
	headerLine       bool
	columnsHaveTypes bool
	parseGrace       string
	drop             bool
	workers          int
	batchSize        int
	ignoreBlanks     bool
	mode             string
	upsertFields     string
	jsonArray        bool
	stopOnError      bool
	maintainOrder    bool
	bypassValidation bool
	noProgress       bool
}

func (o *importOptions) register(fs *flag.FlagSet) {
	o.conn.register(fs)
	stringFlag(fs, &o.db, "db", "d", "test", "database to import into")
	stringFlag(fs, &o.coll, "collection", "c", "", "collection to import into (default: the file's name without extension)")
	fs.StringVar(&o.typ, "type", "json", "input format: json, csv or tsv")
	fs.StringVar(&o.file, "file", "", "file to import (default: standard input)")
	stringFlag(fs, &o.fields, "fields", "f", "", "comma-separated field names for CSV/TSV")
	fs.StringVar(&o.fieldFile, "fieldFile", "", "file with one field name per line, for CSV/TSV")
	fs.BoolVar(&o.headerLine, "headerline", false, "use the first line of the CSV/TSV input as field names")
	fs.BoolVar(&o.columnsHaveTypes, "columnsHaveTypes", false, "field names carry types: name.int32(), name.date(2006-01-02), ...")
	fs.StringVar(&o.parseGrace, "parseGrace", "stop", "what a typed column does with text its type rejects: autoCast, skipField, skipRow or stop")
	fs.BoolVar(&o.drop, "drop", false, "drop the collection before importing")
	fs.IntVar(&o.workers, "numInsertionWorkers", 1, "number of concurrent insertion workers")
	fs.IntVar(&o.batchSize, "batchSize", 1000, "documents per insert batch")
	fs.BoolVar(&o.ignoreBlanks, "ignoreBlanks", false, "leave out empty CSV/TSV fields")
	fs.StringVar(&o.mode, "mode", "insert", "insert, upsert (replace by --upsertFields), merge (update by --upsertFields) or delete")
	fs.StringVar(&o.upsertFields, "upsertFields", "", "comma-separated fields that identify a document for upsert, merge and delete (default _id)")
	fs.BoolVar(&o.jsonArray, "jsonArray", false, "the JSON input is one array of documents")
	fs.BoolVar(&o.stopOnError, "stopOnError", false, "stop at the first failed write")
	fs.BoolVar(&o.maintainOrder, "maintainInsertionOrder", false, "insert in input order (one worker, ordered batches)")
	fs.BoolVar(&o.bypassValidation, "bypassDocumentValidation", false, "skip the collection's schema validation")
	fs.BoolVar(&o.noProgress, "noProgress", false, "do not show the progress bar")
}

func runImport(args []string, stdin io.Reader, _, stderr io.Writer) int {
	var o importOptions
	return tool{
		name:  "import",
		usage: "usage: cairn import [flags] [FILE]   (mongoimport's flags; reads standard input without FILE)",
		flags: o.register,
		args: func(rest []string) error {
			return argOrFlag(rest, &o.file, "file", "file", "too many positional arguments")
		},
		work: func(ctx context.Context) error {
			res, err := importData(ctx, &o, stdin, stderr)
			fmt.Fprintf(stderr, "%d document(s) imported successfully. %d document(s) failed to import.\n", res.ok, res.failed)
			return err
		},
	}.run(args, stderr)
}

// importResult counts what an import did.
type importResult struct {
	ok, failed int64
}

// importer is one import's shared state.
type importer struct {
	o       *importOptions
	coll    *mongo.Collection
	layout  *rowLayout // CSV/TSV only
	ok      atomic.Int64
	failed  atomic.Int64
	skipped atomic.Int64
	errOut  io.Writer
	errMu   sync.Mutex
	cancel  context.CancelCauseFunc
}

// docBatch is a batch of parsed documents for one write.
type docBatch struct {
	docs     []bson.Doc
	firstRow int64
}

func (o *importOptions) check() error {
	switch o.typ {
	case "json", "csv", "tsv":
	default:
		return fmt.Errorf("unknown --type %q (json, csv or tsv)", o.typ)
	}
	switch o.mode {
	case "insert", "upsert", "merge", "delete":
	default:
		return fmt.Errorf("unknown --mode %q (insert, upsert, merge or delete)", o.mode)
	}
	if o.typ == "json" {
		if o.fields != "" || o.fieldFile != "" || o.headerLine || o.columnsHaveTypes {
			return errors.New("--fields, --fieldFile, --headerline and --columnsHaveTypes apply to CSV and TSV only")
		}
	} else {
		if o.jsonArray {
			return errors.New("--jsonArray applies to JSON only")
		}
		n := 0
		for _, b := range []bool{o.fields != "", o.fieldFile != "", o.headerLine} {
			if b {
				n++
			}
		}
		if n != 1 {
			return errors.New("CSV and TSV need exactly one of --fields, --fieldFile or --headerline")
		}
	}
	if o.workers < 1 || o.batchSize < 1 {
		return errors.New("--numInsertionWorkers and --batchSize must be at least 1")
	}
	if o.mode == "insert" && o.upsertFields != "" {
		return errors.New("--upsertFields needs --mode upsert, merge or delete")
	}
	if o.coll == "" {
		if o.file == "" || o.file == "-" {
			return errors.New("--collection is required when reading standard input")
		}
		base := filepath.Base(o.file)
		o.coll = strings.TrimSuffix(base, filepath.Ext(base))
	}
	return nil
}

// columnNames returns the CSV/TSV field names given by --fields or
// --fieldFile (the header line is read later, from the input).
func (o *importOptions) columnNames() ([]string, error) {
	if o.fields != "" {
		return strings.Split(o.fields, ","), nil
	}
	if o.fieldFile != "" {
		b, err := os.ReadFile(o.fieldFile)
		if err != nil {
			return nil, fmt.Errorf("reading --fieldFile: %w", err)
		}
		var names []string
		for _, l := range strings.Split(string(b), "\n") {
			if l = trimEOL(l + "\n"); l != "" {
				names = append(names, l)
			}
		}
		return names, nil
	}
	return nil, nil
}

func importData(ctx context.Context, o *importOptions, stdin io.Reader, stderr io.Writer) (importResult, error) {
	if err := o.check(); err != nil {
		return importResult{}, err
	}
	grace, err := parseGraceName(o.parseGrace)
	if err != nil {
		return importResult{}, err
	}
	in, size := stdin, int64(-1)
	if o.file != "" && o.file != "-" {
		f, err := os.Open(o.file)
		if err != nil {
			return importResult{}, err
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
		in = f
	}
	var bytesRead atomic.Int64
	br := bufio.NewReaderSize(countingReader{in, &bytesRead}, 1<<20)

	imp := &importer{o: o, errOut: stderr}
	// The header comes before anything touches the server, so a bad
	// header fails fast.
	var csvr = newCSVReader(br)
	firstRow := int64(1)
	if o.typ != "json" {
		names, err := o.columnNames()
		if err != nil {
			return importResult{}, err
		}
		if o.headerLine {
			if o.typ == "tsv" {
				names, err = readTSVHeader(br)
			} else {
				names, err = csvr.Read()
			}
			if err != nil {
				return importResult{}, fmt.Errorf("reading the header line: %w", err)
			}
			firstRow = 2
		}
		cols, err := parseColumns(names, o.columnsHaveTypes)
		if err != nil {
			return importResult{}, err
		}
		imp.layout = newRowLayout(cols, grace, o.ignoreBlanks)
	}

	client, err := o.conn.connect(ctx, "cairn import")
	if err != nil {
		return importResult{}, err
	}
	defer client.Disconnect(context.Background())
	imp.coll = client.Database(o.db).Collection(o.coll)
	if o.drop {
		if err := imp.coll.Drop(ctx); err != nil {
			return importResult{}, fmt.Errorf("dropping %s.%s: %w", o.db, o.coll, err)
		}
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	imp.cancel = cancel
	parsers, inserters := runtime.GOMAXPROCS(0), o.workers
	if o.maintainOrder {
		parsers, inserters = 1, 1
	}
	chunks := make(chan chunk, 2*parsers)
	batches := make(chan docBatch, 2*inserters)

	bar := startProgress(stderr, !o.noProgress, fmt.Sprintf("%s.%s", o.db, o.coll), size, &bytesRead, &imp.ok)
	var readErr error
	go func() {
		defer close(chunks)
		switch o.typ {
		case "tsv":
			readErr = readTSV(ctx, br, firstRow, chunks)
		case "csv":
			readErr = readCSV(ctx, csvr, firstRow, o.batchSize, chunks)
		default:
			readErr = readJSON(ctx, br, o.jsonArray, o.batchSize, chunks)
		}
		if readErr != nil {
			cancel(readErr)
		}
	}()
	var pwg sync.WaitGroup
	for range parsers {
		pwg.Add(1)
		go func() { defer pwg.Done(); imp.parse(ctx, chunks, batches) }()
	}
	go func() { pwg.Wait(); close(batches) }()
	var iwg sync.WaitGroup
	for range inserters {
		iwg.Add(1)
		go func() { defer iwg.Done(); imp.insert(ctx, batches) }()
	}
	iwg.Wait()
	for range chunks { // drain after a cancellation so the reader ends
	}
	bar.finish()
	res := importResult{ok: imp.ok.Load(), failed: imp.failed.Load()}
	if n := imp.skipped.Load(); n > 0 {
		fmt.Fprintf(stderr, "%d row(s) skipped (--parseGrace skipRow)\n", n)
	}
	if err := context.Cause(ctx); err != nil {
		return res, err
	}
	return res, nil
}

// fail stops the import with err (the first error wins).
func (imp *importer) fail(err error) { imp.cancel(err) }

// warn reports an error the import continues through.
func (imp *importer) warn(format string, args ...any) {
	imp.errMu.Lock()
	defer imp.errMu.Unlock()
	fmt.Fprintf(imp.errOut, "continuing through error: "+format+"\n", args...)
}

// parse turns chunks into batches of --batchSize documents.
func (imp *importer) parse(ctx context.Context, in <-chan chunk, out chan<- docBatch) {
	batch := docBatch{docs: make([]bson.Doc, 0, imp.o.batchSize)}
	flush := func() bool {
		if len(batch.docs) == 0 {
			return true
		}
		select {
		case out <- batch:
		case <-ctx.Done():
			return false
		}
		batch = docBatch{docs: make([]bson.Doc, 0, imp.o.batchSize)}
		return true
	}
	var b bson.Builder
	var fields []string
	sizeHint := 256
	add := func(row int64, build func() error) bool {
		if len(batch.docs) == 0 {
			batch.firstRow = row
		}
		b.Reset(make([]byte, 0, sizeHint))
		if err := build(); err != nil {
			if errors.Is(err, errSkipRow) {
				imp.skipped.Add(1)
				return true
			}
			imp.fail(fmt.Errorf("row %d: %w", row, err))
			return false
		}
		d := b.Finish()
		sizeHint = len(d) + 64
		batch.docs = append(batch.docs, d)
		if len(batch.docs) >= imp.o.batchSize {
			return flush()
		}
		return true
	}
	for c := range in {
		if ctx.Err() != nil {
			continue
		}
		row := c.firstRow
		switch {
		case c.tsv != "":
			text := c.tsv
			for len(text) > 0 {
				line := text
				if i := strings.IndexByte(text, '\n'); i >= 0 {
					line, text = text[:i], text[i+1:]
				} else {
					text = ""
				}
				line = strings.TrimSuffix(line, "\r")
				if line != "" {
					fields = splitTabs(fields[:0], line)
					if !add(row, func() error { return imp.layout.build(&b, fields) }) {
						break
					}
				}
				row++
			}
		case c.csv != nil:
			for _, rec := range c.csv {
				if !add(row, func() error { return imp.layout.build(&b, rec) }) {
					break
				}
				row++
			}
		default:
			for _, raw := range c.json {
				doc, err := bson.UnmarshalExtJSON(raw, false)
				if err != nil {
					imp.fail(fmt.Errorf("document #%d: %w", row, err))
					break
				}
				if len(batch.docs) == 0 {
					batch.firstRow = row
				}
				batch.docs = append(batch.docs, doc)
				if len(batch.docs) >= imp.o.batchSize && !flush() {
					break
				}
				row++
			}
		}
	}
	if ctx.Err() == nil {
		flush()
	}
}

func splitTabs(dst []string, line string) []string {
	for {
		i := strings.IndexByte(line, '\t')
		if i < 0 {
			return append(dst, line)
		}
		dst = append(dst, line[:i])
		line = line[i+1:]
	}
}

// insert writes batches until the input ends or the import stops.
func (imp *importer) insert(ctx context.Context, in <-chan docBatch) {
	for batch := range in {
		if ctx.Err() != nil {
			continue
		}
		if err := imp.write(ctx, batch); err != nil {
			imp.fail(err)
		}
	}
}
