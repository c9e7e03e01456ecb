package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/gzip"

	"github.com/cairndb/cairn/bson"
)

// The dump layout is mongodump's: DIR/<db>/<collection>.bson holds the
// documents back to back as raw BSON, DIR/<db>/<collection>.metadata.json
// the collection's options and indexes as canonical Extended JSON; with
// --gzip both names end in .gz.
const (
	bsonExt     = ".bson"
	metadataExt = ".metadata.json"
	gzipExt     = ".gz"
)

// maxBSONFileDoc bounds one document in a dump file: MongoDB's internal
// limit, 16 MiB plus 16 KiB.
const maxBSONFileDoc = 16<<20 + 16<<10

// collMetadata is a <collection>.metadata.json file, field for field as
// mongodump writes it.
type collMetadata struct {
	Options        bson.Doc
	Indexes        []bson.Doc
	UUID           string
	CollectionName string
	Type           string // "collection" or "view"
}

// marshal writes the metadata as canonical Extended JSON in mongodump's
// field order.
func (m *collMetadata) marshal() ([]byte, error) {
	var b bson.Builder
	opts := m.Options
	if opts == nil {
		opts = bson.EmptyDoc
	}
	b.AppendDocument("options", opts)
	b.StartArray("indexes")
	for i, ix := range m.Indexes {
		b.AppendDocument(bson.Index(i), ix)
	}
	b.End()
	if m.UUID != "" {
		b.AppendString("uuid", m.UUID)
	}
	b.AppendString("collectionName", m.CollectionName)
	b.AppendString("type", m.Type)
	return b.Finish().MarshalExtJSON(true)
}

// parseMetadata reads a metadata file's Extended JSON.
func parseMetadata(data []byte) (*collMetadata, error) {
	d, err := bson.UnmarshalExtJSON(data, false)
	if err != nil {
		return nil, err
	}
	m := &collMetadata{Type: "collection"}
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "options":
			if e.Value.Type != bson.TypeDocument {
				return nil, errors.New("options is not a document")
			}
			m.Options = e.Value.Document()
		case "indexes":
			if e.Value.Type != bson.TypeArray {
				return nil, errors.New("indexes is not an array")
			}
			ix := e.Value.Document().Iter()
			for ix.Next() {
				if v := ix.Element().Value; v.Type == bson.TypeDocument {
					m.Indexes = append(m.Indexes, v.Document())
				}
			}
		case "uuid":
			m.UUID = e.Value.StringValue()
		case "collectionName":
			m.CollectionName = e.Value.StringValue()
		case "type":
			m.Type = e.Value.StringValue()
		}
	}
	return m, nil
}

// createFile creates path, compressed when gz is set; close flushes it.
func createFile(path string, gz bool) (w io.Writer, closeFn func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if !gz {
		return bw, func() error {
			err := bw.Flush()
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return err
		}, nil
	}
	zw := gzip.NewWriter(bw)
	return zw, func() error {
		err := zw.Close()
		if ferr := bw.Flush(); err == nil {
			err = ferr
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}, nil
}

// openFile opens path, decompressing it when its name ends in .gz. n, if
// not nil, counts the bytes read from the file itself.
func openFile(path string, counter func(int)) (io.Reader, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	var r io.Reader = f
	if counter != nil {
		r = funcCountingReader{f, counter}
	}
	br := bufio.NewReaderSize(r, 1<<20)
	if !strings.HasSuffix(path, gzipExt) {
		return br, f.Close, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return zr, func() error { zr.Close(); return f.Close() }, nil
}

type funcCountingReader struct {
	r io.Reader
	n func(int)
}

func (c funcCountingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n(n)
	return n, err
}

// readBSONDoc reads the next document of a .bson file; io.EOF at a clean end.
func readBSONDoc(r io.Reader) (bson.Doc, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			return nil, errors.New("truncated document length")
		}
		return nil, err
	}
	n := int(binary.LittleEndian.Uint32(head[:]))
	if n < 5 || n > maxBSONFileDoc {
		return nil, fmt.Errorf("invalid document length %d", n)
	}
	d := make([]byte, n)
	copy(d, head[:])
	if _, err := io.ReadFull(r, d[4:]); err != nil {
		return nil, fmt.Errorf("truncated document: %w", err)
	}
	if d[n-1] != 0 {
		return nil, errors.New("document does not end in a zero byte")
	}
	return bson.Doc(d), nil
}

// dumpFileName is the file of a collection in its database's directory.
func dumpFileName(dir, coll, ext string, gz bool) string {
	name := filepath.Join(dir, coll+ext)
	if gz {
		name += gzipExt
	}
	return name
}
