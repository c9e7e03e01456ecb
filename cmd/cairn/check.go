package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/cairndb/cairn/kv"
)

// runCheck opens the data directory read-only (it must not be in use by a
// running cairnd) and walks every page; it exits 1 on corruption.
func runCheck(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbpath := fs.String("dbpath", "data/db", "data directory to check")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if _, err := os.Stat(*dbpath); err != nil {
		fmt.Fprintf(stderr, "cairn check: %v\n", err)
		return 2
	}
	if err := kv.Check(*dbpath, nil); err != nil {
		fmt.Fprintf(stderr, "cairn check: %s: %v\n", *dbpath, err)
		return 1
	}
	fmt.Fprintf(stdout, "cairn check: %s: ok\n", *dbpath)
	return 0
}
