//go:build !invariants && !race

package invariants

// Enabled is false in ordinary builds: kv's self-checks are compiled out.
const Enabled = false
