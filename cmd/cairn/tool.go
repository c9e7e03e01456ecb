package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
)

// tool is what the subcommands that talk to a server share around their
// work: the flag set and its -help text, the check of the arguments after
// the flags, the context an interrupt cancels, and the exit codes (0 done
// or -help, 2 a bad flag or argument, 1 the work failed).
type tool struct {
	name  string                 // the subcommand, as the messages name it
	usage string                 // the first line of -help's text
	flags func(fs *flag.FlagSet) // registers the flags
	// args checks and takes the arguments after the flags; its error is a
	// usage error. nil: the tool takes none.
	args func(rest []string) error
	// work does the tool's work, printing its own summary; its error is
	// reported on stderr.
	work func(ctx context.Context) error
}

// argOrFlag takes rest, the arguments after the flags of a tool that
// takes at most one, the value of flag --name given in its place: into
// *dst, unless the flag was given too. what names the value in the error,
// tooMany heads the error for more than one argument.
func argOrFlag(rest []string, dst *string, name, what, tooMany string) error {
	switch {
	case len(rest) > 1:
		return fmt.Errorf("%s: %v", tooMany, rest)
	case len(rest) == 1 && *dst != "":
		return fmt.Errorf("give the %s either as --%s or as an argument, not both", what, name)
	case len(rest) == 1:
		*dst = rest[0]
	}
	return nil
}

// run parses args and runs the tool's work.
func (t tool) run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet(t.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	t.flags(fs)
	if code, ok := parseFlags(fs, t.usage, args, stderr); !ok {
		return code
	}
	if t.args != nil {
		if err := t.args(fs.Args()); err != nil {
			fmt.Fprintf(stderr, "cairn %s: %v\n", t.name, err)
			return 2
		}
	} else if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "cairn %s: unexpected arguments: %v\n", t.name, fs.Args())
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := t.work(ctx); err != nil {
		fmt.Fprintf(stderr, "cairn %s: %v\n", t.name, err)
		return 1
	}
	return 0
}
