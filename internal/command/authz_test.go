package command

import (
	"slices"
	"strings"
	"testing"

	"github.com/cairndb/cairn/internal/auth"
)

// TestEveryCommandDeclaresAccess: a command without a declared requirement
// would be root-only; every command in the table states what it needs.
func TestEveryCommandDeclaresAccess(t *testing.T) {
	open := map[string]bool{}
	for _, c := range table {
		if c.Needs == 0 {
			t.Errorf("command %s declares no access requirement (Command.Needs)", c.Name)
		}
		if c.Needs&auth.Open != 0 {
			open[c.Name] = true
		}
	}
	// What a client may run before authenticating, as in MongoDB.
	want := "buildInfo connectionStatus hello isMaster listCommands logout ping saslContinue saslStart whatsmyuri"
	var got []string
	for _, c := range table {
		if open[c.Name] {
			got = append(got, c.Name)
		}
	}
	slices.Sort(got)
	if g := strings.Join(got, " "); g != want {
		t.Errorf("open commands: %s\nwant: %s", g, want)
	}
}
