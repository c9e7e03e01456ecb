// Command cairn is Cairn's operator tool. Subcommands:
//
//	cairn check --dbpath DIR   check every page of a data directory offline
//
// (import, export, dump, restore and stats are later work.)
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/cairndb/cairn/kv"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		fmt.Fprintln(stdout, "usage: cairn check --dbpath DIR")
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	switch args[0] {
	case "check":
		return check(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "cairn: unknown command %q (try 'cairn help')\n", args[0])
	return 2
}

// check opens the data directory read-only (it must not be in use by a
// running cairnd) and walks every page; it exits 1 on corruption.
func check(args []string, stdout, stderr io.Writer) int {
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
