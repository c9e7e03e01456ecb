package mongoerr

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"testing"
)

// TestGeneratedCodes checks codes_gen.go against codes known from MongoDB's
// error_codes.yml, and that CodeName answers their names.
func TestGeneratedCodes(t *testing.T) {
	for _, tc := range []struct {
		code int32
		want int32
		name string
	}{
		{OK, 0, "OK"},
		{InternalError, 1, "InternalError"},
		{BadValue, 2, "BadValue"},
		{NoSuchKey, 4, "NoSuchKey"},
		{Unauthorized, 13, "Unauthorized"},
		{NamespaceNotFound, 26, "NamespaceNotFound"},
		{MaxTimeMSExpired, 50, "MaxTimeMSExpired"},
		{WriteConcernTimeout, 64, "WriteConcernTimeout"},
		{OperationNotSupportedInTransaction, 263, "OperationNotSupportedInTransaction"},
		{QueryExceededMemoryLimitNoDiskUseAllowed, 292, "QueryExceededMemoryLimitNoDiskUseAllowed"},
		{NotWritablePrimary, 10107, "NotWritablePrimary"},
		{DuplicateKey, 11000, "DuplicateKey"},
		{Interrupted, 11601, "Interrupted"},
		{OutOfDiskSpace, 14031, "OutOfDiskSpace"},
		{IDLUnknownField, 40415, "IDLUnknownField"},
	} {
		if tc.code != tc.want {
			t.Errorf("%s = %d, want %d", tc.name, tc.code, tc.want)
		}
		if got := CodeName(tc.code); got != tc.name {
			t.Errorf("CodeName(%d) = %q, want %q", tc.code, got, tc.name)
		}
		if got := New(tc.code, "x").CodeName(); got != tc.name {
			t.Errorf("Error{Code: %d}.CodeName() = %q, want %q", tc.code, got, tc.name)
		}
	}
}

func TestLocationCodeNames(t *testing.T) {
	for _, tc := range []struct {
		code int32
		want string
	}{
		{SortStageNoKeys, "Location15976"},
		{FieldPathDollarPrefix, "Location16410"},
		{PipelineUnknownStage, "Location40324"},
		{AlreadyAuthenticated, "Location5626701"},
		{12345, "Location12345"},
	} {
		if got := CodeName(tc.code); got != tc.want {
			t.Errorf("CodeName(%d) = %q, want %q", tc.code, got, tc.want)
		}
	}
}

func TestCategories(t *testing.T) {
	for _, tc := range []struct {
		code int32
		want []Category
	}{
		{MaxTimeMSExpired, []Category{CategoryInterruption, CategoryExceededTimeLimitError}},
		{Interrupted, []Category{CategoryInterruption}},
		{HostUnreachable, []Category{CategoryNetworkError, CategoryRetriableError}},
		{NetworkTimeout, []Category{CategoryNetworkError, CategoryNetworkTimeoutError, CategoryRetriableError}},
		{NotWritablePrimary, []Category{CategoryNotPrimaryError, CategoryRetriableError}},
		{InterruptedAtShutdown, []Category{CategoryInterruption, CategoryShutdownError, CategoryCancellationError, CategoryRetriableError}},
		{WriteConcernTimeout, []Category{CategoryWriteConcernError}},
		{CursorNotFound, []Category{CategoryCursorInvalidatedError}},
		{OperationNotSupportedInTransaction, []Category{CategoryVoteAbortError}},
		{DuplicateKey, nil},
		{SortStageNoKeys, nil},
	} {
		if got := Categories(tc.code); !slices.Equal(got, tc.want) {
			t.Errorf("Categories(%s) = %v, want %v", CodeName(tc.code), got, tc.want)
		}
		for c := range Category(len(categoryNames)) {
			if got, want := InCategory(tc.code, c), slices.Contains(tc.want, c); got != want {
				t.Errorf("InCategory(%s, %s) = %v, want %v", CodeName(tc.code), c, got, want)
			}
		}
	}
	if got := CategoryRetriableError.String(); got != "RetriableError" {
		t.Errorf("CategoryRetriableError.String() = %q", got)
	}
	if InCategory(MaxTimeMSExpired, Category(200)) {
		t.Error("InCategory with an unknown category is true")
	}
	if got := Category(200).String(); got != "Category(200)" {
		t.Errorf("Category(200).String() = %q", got)
	}
}

func TestIsInterruption(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{New(Interrupted, "x"), true},
		{New(MaxTimeMSExpired, "x"), true},
		{New(DuplicateKey, "x"), false},
		{New(BadValue, "x"), false},
	} {
		if got := IsInterruption(tc.err); got != tc.want {
			t.Errorf("IsInterruption(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestLocationsHaveNoName checks that no constant of locations.go is a code
// error_codes.yml names (it belongs in the generated file then, and its
// codeName would be wrong if a name were invented for it), and that no two
// share a code.
func TestLocationsHaveNoName(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "locations.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]string{}
	n := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			lit, ok := vs.Values[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.INT {
				t.Errorf("%s is not an integer literal", vs.Names[0].Name)
				continue
			}
			code, err := strconv.ParseInt(lit.Value, 10, 32)
			if err != nil {
				t.Fatal(err)
			}
			n++
			name := vs.Names[0].Name
			if named, ok := codeNames[int32(code)]; ok {
				t.Errorf("%s = %d is error_codes.yml's %s", name, code, named)
			}
			if prev, dup := seen[code]; dup {
				t.Errorf("%s and %s are both %d", prev, name, code)
			}
			seen[code] = name
		}
	}
	if n == 0 {
		t.Fatal("no constants found in locations.go")
	}
}
