// Command cairn is Cairn's operator tool, the counterpart of MongoDB's
// database tools. Each subcommand lives in its own file:
//
//	cairn check   --dbpath DIR          check every page of a stopped server's data directory
//	cairn import  [flags] [FILE]        load JSON, CSV or TSV into a collection (mongoimport's flags)
//	cairn export  [flags]               write a collection as JSON, CSV or TSV (mongoexport's flags)
//	cairn dump    [flags]               write databases as BSON files in mongodump's layout
//	cairn restore [flags] [DIR]         restore such a dump (mongorestore's flags)
//	cairn stats   [flags] [SECONDS]     print server figures every interval (like mongostat)
//
// Subcommands that talk to a server take mongo tools' connection flags:
// --uri, --host, --port, --username, --password, --authenticationDatabase.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// subcommand is one verb of the tool.
type subcommand struct {
	summary string
	run     func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

var subcommands = map[string]subcommand{
	"check":   {"check a stopped server's data directory offline", runCheck},
	"import":  {"import JSON, CSV or TSV documents into a collection", runImport},
	"export":  {"export a collection as JSON, CSV or TSV", runExport},
	"dump":    {"dump databases as BSON files in mongodump's layout", runDump},
	"restore": {"restore a dump made by cairn dump or mongodump", runRestore},
	"stats":   {"print server figures every second, like mongostat", runStats},
}

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	sc, ok := subcommands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "cairn: unknown command %q (try 'cairn help')\n", args[0])
		return 2
	}
	return sc.run(args[1:], stdin, stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: cairn COMMAND [flags]   ('cairn COMMAND --help' lists a command's flags)")
	names := make([]string, 0, len(subcommands))
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, subcommands[n].summary)
	}
}
