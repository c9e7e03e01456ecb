// Package invariants tells the storage engine whether to run its
// expensive self-checks.
//
// kv verifies some of its own invariants as it runs: that every node a
// commit publishes carries search prefixes in step with its keys, that a
// checkpoint releases no page a snapshot can still reach, that the free
// list holds no page twice and no page of the current tree. Those checks
// walk trees and free lists on every commit or checkpoint, too slow for a
// production build, so they run only when Enabled is true: in builds with
// the invariants build tag (go test -tags invariants; the end-to-end tests
// build cairnd so) and in race-enabled builds (go test -race). Enabled
// is a constant, so in any other build the compiler removes the checks
// and they cost nothing.
//
// The package is modelled on pebble's internal/invariants.
package invariants
