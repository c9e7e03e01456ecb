//go:build invariants || race

package invariants

// Enabled is true in builds with the invariants build tag or with the race
// detector: kv then verifies its invariants as it runs.
const Enabled = true
