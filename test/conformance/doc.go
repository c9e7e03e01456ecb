// Package conformance runs MongoDB's unified-format CRUD specification tests
// (mongodb/specifications, source/crud/tests/unified) against a real cairnd
// through the official Go driver v2.
//
// The test files are read at run time from ../shared/conformance/crud-unified/
// next to the repository and are never copied into it: their licence (CC
// BY-NC-SA) does not fit the project's. Without that folder the tests skip.
//
// Running:
//
//	go test ./test/conformance/            # pass/fail only
//	go test -v ./test/conformance/         # per-file lines, skip reasons, summary
//	CAIRN_CONFORMANCE_REPORT=/tmp/c.txt go test ./test/conformance/
//
// The summary line "conformance: N passed, N failed, N skipped" and the table
// of skip reasons are printed on stdout, which go test shows with -v, in
// directory mode (go test in this directory) or when the package fails.
// CAIRN_CONFORMANCE_REPORT names a file that receives the per-file lines, the
// summary, every failure with its message, and notes (errors raised where a
// test only asserts that one is; numeric type changes in collection
// contents). CAIRND_BIN runs a prebuilt cairnd instead of building one.
//
// Skips: tests whose runOnRequirements a standalone server of the reported
// version does not meet, tests that need fail points while the server has no
// configureFailPoint command, and tests the Go driver itself cannot pass
// against any server (driverskips.go; set CAIRN_CONFORMANCE_NO_DRIVER_SKIPS=1
// to run them anyway).
//
// Failures: testdata/known_failures.txt lists spec tests cairnd is known to
// fail ("file/description # reason"). A listed test that fails is counted as
// failed without failing the suite; a listed test that passes fails the suite
// until its line is removed, so the list only shrinks. Any other failure fails
// the suite.
package conformance
