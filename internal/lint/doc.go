// Package lint holds the rules the code base checks itself against, as
// tests: the direction of imports between Cairn's packages, staticcheck
// and go vet (lint_test.go).
package lint
