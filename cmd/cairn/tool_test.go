package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestToolUsageErrors checks the refusals the tools share through tool.run
// and argOrFlag: each ends with exit code 2 and says why on stderr.
func TestToolUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "x"}, "cairn export: unexpected arguments: [x]\n"},
		{[]string{"dump", "y", "z"}, "cairn dump: unexpected arguments: [y z]\n"},
		{[]string{"import", "a", "b"}, "cairn import: too many positional arguments: [a b]\n"},
		{[]string{"import", "--file", "f", "a"}, "cairn import: give the file either as --file or as an argument, not both\n"},
		{[]string{"restore", "a", "b"}, "cairn restore: too many arguments: [a b]\n"},
		{[]string{"restore", "--dir", "d", "a"}, "cairn restore: give the directory either as --dir or as an argument, not both\n"},
		{[]string{"stats", "1", "2"}, "cairn stats: too many arguments: [1 2]\n"},
		{[]string{"stats", "0"}, "cairn stats: invalid interval \"0\"\n"},
	} {
		var out, errOut bytes.Buffer
		if rc := run(c.args, nil, &out, &errOut); rc != 2 || errOut.String() != c.want {
			t.Errorf("%v: exit %d, stderr %q; want 2, %q", c.args, rc, errOut.String(), c.want)
		}
	}
	var out, errOut bytes.Buffer
	if rc := run([]string{"dump", "--help"}, nil, &out, &errOut); rc != 0 || !strings.HasPrefix(errOut.String(), "usage: cairn dump [flags]") {
		t.Errorf("dump --help: exit %d, stderr %q", rc, errOut.String())
	}
	if rc := run([]string{"restore", "--bogus"}, nil, &out, &errOut); rc != 2 {
		t.Errorf("restore --bogus: exit %d", rc)
	}
}

func TestArgOrFlag(t *testing.T) {
	dst := ""
	if err := argOrFlag(nil, &dst, "dir", "directory", "too many"); err != nil || dst != "" {
		t.Fatalf("no argument: %q, %v", dst, err)
	}
	if err := argOrFlag([]string{"d1"}, &dst, "dir", "directory", "too many"); err != nil || dst != "d1" {
		t.Fatalf("one argument: %q, %v", dst, err)
	}
	if err := argOrFlag([]string{"d2"}, &dst, "dir", "directory", "too many"); err == nil || dst != "d1" {
		t.Fatalf("argument and flag: %q, %v", dst, err)
	}
}
