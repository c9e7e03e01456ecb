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
	"errors"
	"flag"
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

// parseFlags sets a subcommand's usage line and parses its flags. It
// returns ok=false with the exit code when the command should end: 0
// after -help, 2 after a bad flag (the flag package has printed why).
func parseFlags(fs *flag.FlagSet, usage string, args []string, stderr io.Writer) (code int, ok bool) {
	fs.Usage = func() {
		fmt.Fprintln(stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	return 0, true
}

// stringFlag registers a string flag under its long name and its
// one-letter shorthand, as MongoDB's tools spell them.
func stringFlag(fs *flag.FlagSet, p *string, long, short, def, usage string) {
	fs.StringVar(p, long, def, usage)
	fs.StringVar(p, short, def, "shorthand for --"+long)
}

// intFlag is stringFlag for integers.
func intFlag(fs *flag.FlagSet, p *int, long, short string, def int, usage string) {
	fs.IntVar(p, long, def, usage)
	fs.IntVar(p, short, def, "shorthand for --"+long)
}
