package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
)

// chunk is a run of input records handed from the reader to the parsers:
// whole TSV lines, CSV records, or JSON documents.
type chunk struct {
	firstRow int64 // 1-based input row (line, record or document) of the first item
	tsv      string
	csv      [][]string
	json     [][]byte
}

// countingReader counts the bytes read through it, for the progress bar.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

const chunkBytes = 1 << 20 // TSV input is cut at line ends into chunks of about this size

// readTSVHeader returns the first line's fields.
func readTSVHeader(br *bufio.Reader) ([]string, error) {
	line, err := br.ReadString('\n')
	if err != nil && (err != io.EOF || line == "") {
		if err == io.EOF {
			return nil, errors.New("no header line: the input is empty")
		}
		return nil, err
	}
	return strings.Split(trimEOL(line), "\t"), nil
}

func trimEOL(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimSuffix(s, "\r")
}

// readTSV cuts the input into chunks of whole lines.
func readTSV(ctx context.Context, br *bufio.Reader, row int64, out chan<- chunk) error {
	var carry []byte
	for {
		buf := make([]byte, len(carry), chunkBytes+len(carry))
		copy(buf, carry)
		n, err := io.ReadFull(br, buf[len(carry):cap(buf)])
		buf = buf[:len(carry)+n]
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			return err
		}
		end := len(buf)
		if !eof {
			i := bytes.LastIndexByte(buf, '\n')
			if i < 0 { // a line longer than the chunk: keep reading
				carry = buf
				continue
			}
			end = i + 1
		}
		carry = buf[end:]
		if end > 0 {
			text := string(buf[:end])
			select {
			case out <- chunk{firstRow: row, tsv: text}:
			case <-ctx.Done():
				return ctx.Err()
			}
			row += int64(strings.Count(text, "\n"))
		}
		if eof {
			return nil
		}
	}
}

// newCSVReader reads RFC 4180 CSV leniently (bare quotes inside fields,
// rows of differing lengths), as mongoimport does.
func newCSVReader(r io.Reader) *csv.Reader {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	return cr
}

// readCSV batches CSV records.
func readCSV(ctx context.Context, cr *csv.Reader, row int64, per int, out chan<- chunk) error {
	for {
		c := chunk{firstRow: row}
		for len(c.csv) < per {
			rec, err := cr.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("reading CSV: %w", err)
			}
			c.csv = append(c.csv, rec)
		}
		if len(c.csv) == 0 {
			return nil
		}
		row += int64(len(c.csv))
		select {
		case out <- c:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// readJSON batches the documents of a stream of JSON objects or, with
// array set, of one JSON array of objects.
func readJSON(ctx context.Context, r io.Reader, array bool, per int, out chan<- chunk) error {
	dec := json.NewDecoder(r)
	if array {
		t, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading JSON array: %w", err)
		}
		if d, ok := t.(json.Delim); !ok || d != '[' {
			return fmt.Errorf("reading JSON array: the input does not start with '['")
		}
	}
	row := int64(1)
	for {
		c := chunk{firstRow: row}
		for len(c.json) < per && (!array || dec.More()) {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				if err == io.EOF && !array {
					break
				}
				return fmt.Errorf("reading JSON document #%d: %w", row+int64(len(c.json)), err)
			}
			c.json = append(c.json, raw)
		}
		if len(c.json) == 0 {
			break
		}
		row += int64(len(c.json))
		select {
		case out <- c:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if array {
		if _, err := dec.Token(); err != nil {
			return fmt.Errorf("reading JSON array: %w", err)
		}
	}
	return nil
}
