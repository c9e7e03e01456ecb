// Package index owns Cairn's secondary indexes: parsing and validating
// index specifications as createIndexes receives them, generating an
// index's entries for a document (multikey expansion, hashed values,
// sparse and partial indexes), building an index in bulk — one scan,
// sort, bottom-up load into the storage engine — and maintaining entries
// as documents change.
//
// Entry layout in the index's kv tree: the order-preserving encoding of the
// indexed values (bson.AppendKey, each field in its direction) followed, for
// non-unique indexes, by the encoded _id, so that every entry is distinct;
// a unique index keys on the values alone, so a second document with the
// same values finds the entry taken. The value of every entry is the encoded
// _id, so a scan fetches the document without decoding the key.
package index

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/index/fts"
	"github.com/cairndb/cairn/internal/mongoerr"
	"github.com/cairndb/cairn/internal/query"
)

// MaxFields is the most fields a compound index may have.
const MaxFields = 32

// Field is one component of an index's key pattern.
type Field struct {
	Path   string
	Parts  []string
	Desc   bool
	Hashed bool
	// Text marks the place of a text index's terms (_fts) in its key.
	Text bool
	// Geo marks a 2dsphere field: its keys are S2 cells (see geo.go).
	Geo bool
	// Flat marks a 2d field: its keys are geohashes of legacy pairs.
	Flat bool
	// Column marks a column store index's field ("$**" or "path.$**").
	Column bool
}

// Spec is a parsed index specification.
type Spec struct {
	Name               string
	Key                bson.Doc
	Fields             []Field
	Unique             bool
	Sparse             bool
	Hidden             bool
	Partial            *query.Filter
	ExpireAfterSeconds int64 // -1 when not a TTL index
	// Clustered marks a clustered collection's clustered index (its spec
	// as the catalog holds it; createIndexes accepts it only as the index
	// the collection already has).
	Clustered bool
	// PrepareUnique: new duplicate keys are refused (DuplicateKey) though
	// the index is not unique yet, so that collMod can convert it to
	// unique (mongod 6.0+).
	PrepareUnique bool
	// Wildcard describes a wildcard index (nil otherwise); Fields then
	// holds its one field ("$**" or "path.$**").
	Wildcard *WildcardSpec
	// Collation orders the index's strings (nil: binary); strings are
	// stored as collation keys, which cannot be decoded.
	Collation *query.Collation
	// Text describes a text index (nil otherwise); Fields then holds the
	// prefix fields, one Field with Text set, and the suffix fields.
	Text *fts.Spec
	// Geo describes a 2dsphere index (nil otherwise).
	Geo *GeoSpec
	// Flat describes a 2d index (nil otherwise); its 2d field is the
	// first.
	Flat *FlatSpec
	// Column describes a column store index (nil otherwise); Fields then
	// holds its one field, with Column set.
	Column *ColumnSpec
	// Raw is the specification as listIndexes returns it.
	Raw bson.Doc
}

// IsID reports whether this is the _id index (or a clustered
// collection's clustered index, which stands for it).
func (s *Spec) IsID() bool { return s.Name == "_id_" || s.Clustered }

func badSpec(format string, args ...any) error {
	return mongoerr.New(mongoerr.CannotCreateIndex, format, args...)
}

// knownOptions are createIndexes' index options Cairn understands; others
// MongoDB has are refused by name.
var knownOptions = map[string]bool{
	"key": true, "name": true, "unique": true, "sparse": true, "partialFilterExpression": true,
	"expireAfterSeconds": true, "hidden": true, "v": true, "background": true, "ns": true, "wildcardProjection": true,
	"weights": true, "default_language": true, "language_override": true, "textIndexVersion": true,
	"collation": true, "2dsphereIndexVersion": true, "bits": true, "min": true, "max": true,
	"columnstoreProjection": true, "clustered": true, "prepareUnique": true, "dropDups": true,
}

var unsupportedOptions = map[string]string{
	"bucketSize":    "geoHaystack indexes",
	"storageEngine": "index storage engine options",
}

// IsIndexOption reports whether name is an index option mongod knows
// (Cairn runs it or refuses it by name); createIndexes'
// ignoreUnknownIndexOptions drops the others.
func IsIndexOption(name string) bool {
	_, unsupported := unsupportedOptions[name]
	return knownOptions[name] || unsupported
}

// Parse validates an index specification from createIndexes (or the
// catalog) and fills in the defaults (name, v: 2).
func Parse(d bson.Doc) (*Spec, error) {
	s := &Spec{ExpireAfterSeconds: -1}
	var nameSet bool
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		if !knownOptions[e.Key] {
			if what, ok := unsupportedOptions[e.Key]; ok {
				return nil, mongoerr.New(mongoerr.CommandNotSupported, "Cairn does not support %s (index option '%s')", what, e.Key)
			}
			return nil, mongoerr.New(mongoerr.InvalidIndexSpecificationOption, "The field '%s' is not valid for an index specification. Specification: %s", e.Key, d.String())
		}
		switch e.Key {
		case "key":
			if e.Value.Type != bson.TypeDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "The field 'key' must be an object, but got %s", e.Value.Type)
			}
			s.Key = e.Value.Document()
		case "name":
			if e.Value.Type != bson.TypeString {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "The field 'name' must be a string, but got %s", e.Value.Type)
			}
			s.Name = strings.Clone(e.Value.StringValue())
			nameSet = true
		case "unique":
			s.Unique = e.Value.Truthy()
		case "clustered":
			s.Clustered = e.Value.Truthy()
		case "prepareUnique":
			s.PrepareUnique = e.Value.Truthy()
		case "sparse":
			s.Sparse = e.Value.Truthy()
		case "hidden":
			s.Hidden = e.Value.Truthy()
		case "partialFilterExpression":
			if e.Value.Type != bson.TypeDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "The field 'partialFilterExpression' must be an object, but got %s", e.Value.Type)
			}
			f, err := query.ParseFilter(e.Value.Document(), &query.Options{})
			if err != nil {
				return nil, err
			}
			s.Partial = f
		case "expireAfterSeconds":
			n, ok := e.Value.AsInt64()
			if !ok || !e.Value.IsNumber() || n < 0 || n > math.MaxInt32 {
				return nil, mongoerr.New(mongoerr.InvalidOptions, "TTL index 'expireAfterSeconds' option must be within an acceptable range, try a lower number")
			}
			s.ExpireAfterSeconds = n
		case "collation":
			if e.Value.Type != bson.TypeDocument {
				return nil, mongoerr.New(mongoerr.TypeMismatch, "The field 'collation' must be an object, but got %s", e.Value.Type)
			}
			c, err := query.ParseCollation(e.Value.Document())
			if err != nil {
				return nil, err
			}
			s.Collation = c
		case "v":
			if n, ok := e.Value.AsInt64(); !ok || (n != 1 && n != 2) {
				return nil, badSpec("Invalid index specification %s; cannot create an index with v=%s", d.String(), e.Value.String())
			}
		}
	}
	if s.Key == nil {
		return nil, mongoerr.New(mongoerr.FailedToParse, "The 'key' field is a required property of an index specification")
	}
	if err := s.parseKey(); err != nil {
		return nil, err
	}
	if !nameSet {
		s.Name = DefaultName(s.Key)
	}
	isText, err := s.parseText(d)
	if err != nil {
		return nil, err
	}
	if err := s.parseGeo(d, isText); err != nil {
		return nil, err
	}
	isColumn, err := s.parseColumnStore(d)
	if err != nil {
		return nil, err
	}
	if !isText && !isColumn {
		if err := s.parseWildcard(d); err != nil {
			return nil, err
		}
	}
	if s.Name == "" {
		return nil, badSpec("The index name cannot be empty")
	}
	if s.Name == "*" {
		return nil, badSpec("The index name '*' is not valid.")
	}
	if s.IsID() && !s.Clustered && (s.Fields[0].Path != "_id" || len(s.Fields) != 1) {
		return nil, badSpec("The index name '_id_' is reserved for the _id index, which must have key pattern {_id: 1}, found key: %s", s.Key.String())
	}
	if len(s.Fields) == 1 && s.Fields[0].Path == "_id" && !s.Fields[0].Desc && !s.Fields[0].Hashed {
		// mongod's rules for the _id key pattern: unique: true is allowed
		// (and changes nothing), unique: false, sparse and partial are not.
		if u, ok := d.Lookup("unique"); ok && !u.Truthy() {
			return nil, badSpec("_id index cannot be non-unique")
		}
		if s.Partial != nil {
			return nil, badSpec("_id index cannot be a partial index")
		}
		if s.Sparse {
			return nil, badSpec("_id index cannot be sparse")
		}
	}
	if s.Sparse && s.Partial != nil {
		return nil, badSpec("cannot mix \"partialFilterExpression\" and \"sparse\" options")
	}
	switch {
	case isText:
		s.Raw = s.canonicalText(d)
	case s.Geo != nil:
		s.Raw = s.geoRaw(s.canonical(d))
	default:
		s.Raw = s.canonical(d)
	}
	return s, nil
}

func (s *Spec) parseKey() error {
	it := s.Key.Iter()
	hashed := 0
	for it.Next() {
		e := it.Element()
		if e.Key == "" {
			return badSpec("Index keys cannot be an empty field.")
		}
		if strings.HasPrefix(e.Key, "$") && e.Key != "$**" {
			return badSpec("Index key contains an illegal field name: field name starts with '$'.")
		}
		parts := strings.Split(e.Key, ".")
		for _, p := range parts {
			if p == "" {
				return badSpec("Index keys cannot contain an empty field.")
			}
		}
		f := Field{Path: strings.Clone(e.Key), Parts: strings.Split(strings.Clone(e.Key), ".")}
		switch v := e.Value; v.Type {
		case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble, bson.TypeDecimal128:
			n, _ := v.AsFloat64()
			if n == 0 || math.IsNaN(n) {
				return badSpec("Values in the index key pattern can't be all zero, got: %s", s.Key.String())
			}
			f.Desc = n < 0
		case bson.TypeString:
			switch v.StringValue() {
			case "hashed":
				f.Hashed = true
				hashed++
			case "text":
				f.Text = true
			case "2dsphere":
				f.Geo = true
			case "2d":
				f.Flat = true
			case "columnstore":
				f.Column = true
			case "geoHaystack":
				return mongoerr.New(mongoerr.CommandNotSupported, "Cairn does not support %s indexes yet", v.StringValue())
			default:
				return badSpec("Unknown index plugin '%s'", v.StringValue())
			}
		default:
			return badSpec("Values in v:2 index key pattern cannot be of type %s. Only numbers > 0, numbers < 0, and strings are allowed.", v.Type)
		}
		if strings.Contains(e.Key, "$**") && !f.Text && e.Key != "$**" && (!strings.HasSuffix(e.Key, ".$**") || strings.Count(e.Key, "$**") > 1) {
			return badSpec("Index key contains an illegal field name: field name starts with '$'.")
		}
		s.Fields = append(s.Fields, f)
	}
	if len(s.Fields) == 0 {
		return badSpec("Index keys cannot be empty.")
	}
	if len(s.Fields) > MaxFields {
		return badSpec("Index key pattern too large: %d fields, maximum %d", len(s.Fields), MaxFields)
	}
	if hashed > 1 {
		return badSpec("A maximum of one index field is allowed to be hashed but found %d for 'key' %s", hashed, s.Key.String())
	}
	if hashed > 0 && s.Unique {
		return badSpec("Currently hashed indexes cannot guarantee uniqueness. Use a regular index.")
	}
	return nil
}

// DefaultName is MongoDB's generated index name: field_direction pairs
// joined by underscores ("a_1_b_-1", "h_hashed").
func DefaultName(key bson.Doc) string {
	var b strings.Builder
	it := key.Iter()
	first := true
	for it.Next() {
		e := it.Element()
		if !first {
			b.WriteByte('_')
		}
		first = false
		b.WriteString(e.Key)
		b.WriteByte('_')
		switch e.Value.Type {
		case bson.TypeString:
			b.WriteString(e.Value.StringValue())
		case bson.TypeDouble:
			f := e.Value.Double()
			if f == math.Trunc(f) {
				b.WriteString(strconv.FormatInt(int64(f), 10))
			} else {
				b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
			}
		default:
			n, _ := e.Value.AsInt64()
			b.WriteString(strconv.FormatInt(n, 10))
		}
	}
	return b.String()
}

// canonical builds the listIndexes form: {v: 2, key, name, then options}.
func (s *Spec) canonical(d bson.Doc) bson.Doc {
	var b bson.Builder
	b.AppendInt32("v", 2)
	b.AppendDocument("key", s.Key)
	b.AppendString("name", s.Name)
	it := d.Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "key", "name", "v", "ns", "dropDups":
			// dropDups is accepted and ignored (and not kept), as mongod 3.0+.
		case "background":
			b.AppendBool("background", e.Value.Truthy())
		case "unique", "sparse", "hidden", "prepareUnique":
			if e.Value.Truthy() {
				b.AppendBool(e.Key, true)
			}
		case "collation":
			if s.Collation != nil {
				s.Collation.AppendSpec(&b, "collation")
			}
		default:
			b.AppendElement(e)
		}
	}
	return b.Finish()
}

// SameDefinition reports whether two specs describe the same index (key
// pattern and options that matter), ignoring the name.
func SameDefinition(a, b *Spec) bool {
	if !bson.Equal(bson.Value{Type: bson.TypeDocument, Data: a.Key}, bson.Value{Type: bson.TypeDocument, Data: b.Key}) {
		return false
	}
	if (a.Text == nil) != (b.Text == nil) || (a.Text != nil && !sameText(a.Text, b.Text)) {
		return false
	}
	if (a.Geo == nil) != (b.Geo == nil) || (a.Flat == nil) != (b.Flat == nil) || (a.Flat != nil && a.Flat.Grid != b.Flat.Grid) {
		return false
	}
	if !SameCollation(a.Collation, b.Collation) || !sameColumns(a.Column, b.Column) {
		return false
	}
	return a.Unique == b.Unique && a.Sparse == b.Sparse && (a.Partial == nil) == (b.Partial == nil) && a.ExpireAfterSeconds == b.ExpireAfterSeconds
}

func (f Field) String() string { return fmt.Sprintf("%s:%v", f.Path, f.Desc) }

// parsed caches Parse by the specification's bytes: the write path looks
// up every index of a collection on each command.
var parsed = struct {
	sync.RWMutex
	m map[string]*Spec
}{m: make(map[string]*Spec)}

// ParseCached is Parse for specifications already stored in the catalog;
// the result is shared and must not be modified.
func ParseCached(raw bson.Doc) (*Spec, error) {
	parsed.RLock()
	s, ok := parsed.m[string(raw)]
	parsed.RUnlock()
	if ok {
		return s, nil
	}
	s, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	parsed.Lock()
	if len(parsed.m) > 4096 {
		clear(parsed.m)
	}
	parsed.m[string(raw)] = s
	parsed.Unlock()
	return s, nil
}
