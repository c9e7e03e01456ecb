package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairndb/cairn/kv"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	db, err := kv.Open(dir, &kv.Options{JournalSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(context.Background(), func(tx *kv.Tx) error {
		tr, err := tx.CreateTree("t")
		if err != nil {
			return err
		}
		for i := 0; i < 5000; i++ {
			if err := tr.Put([]byte(fmt.Sprintf("key%06d", i)), bytes.Repeat([]byte{'v'}, 100)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if rc := run([]string{"check", "--dbpath", dir}, nil, &out, &errOut); rc != 0 || !strings.Contains(out.String(), "ok") {
		t.Fatalf("clean directory: rc %d, %s%s", rc, out.String(), errOut.String())
	}
	// Damage a page in the middle of the data file.
	path := filepath.Join(dir, "data")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(b) / 2; i < len(b)/2+64; i++ {
		b[i] ^= 0xff
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errOut.Reset()
	if rc := run([]string{"check", "--dbpath", dir}, nil, &out, &errOut); rc != 1 {
		t.Fatalf("damaged directory: rc %d, %s%s", rc, out.String(), errOut.String())
	}
	if rc := run([]string{"bogus"}, nil, &out, &errOut); rc != 2 {
		t.Fatalf("unknown command: rc %d", rc)
	}
}
