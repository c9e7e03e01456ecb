package index

// 2dsphere indexes.
//
// A 2dsphere field's entries are S2 cell ids, as in mongod: a point is
// stored as its leaf cell (level 30, about a centimetre), a line or
// polygon as the cells of a covering (at most geoCoverCells cells). A
// cell id is a 64-bit number whose order is the Hilbert curve's, and a
// cell's descendants are exactly the ids between its RangeMin and
// RangeMax; ids are stored as int64 keys with the top bit flipped, so that
// their order as keys is their order as unsigned numbers.
//
// A region query covers the region with cells and reads, for each cell,
// the range of its descendants (the points and small shapes inside it)
// and the exact ids of its ancestors (large shapes that contain it). The
// candidates are a superset of the answer: the caller checks each
// document's geometry exactly.
//
// Documents whose geo field is missing or null are not indexed (2dsphere
// indexes are sparse, as mongod's version 2 and 3); a value that is not a
// valid geometry fails the write with 16755 "Can't extract geo keys".

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"slices"

	"github.com/golang/geo/r2"
	"github.com/golang/geo/s2"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/geo"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// GeoSpec describes a 2dsphere index.
type GeoSpec struct {
	// Field is the position of the 2dsphere field in Spec.Fields.
	Field int
	// Version is 2dsphereIndexVersion (3 unless given).
	Version int64
}

// geoCoverCells bounds the cells that index a line or polygon.
const geoCoverCells = 8

// IsGeo reports whether the index is a 2dsphere or 2d index.
func (s *Spec) IsGeo() bool { return s.Geo != nil || s.Flat != nil }

// parseGeo recognises a 2dsphere or 2d index.
func (s *Spec) parseGeo(d bson.Doc, isText bool) error {
	pos, flatPos := -1, -1
	for i, f := range s.Fields {
		switch {
		case f.Geo && pos >= 0:
			return mongoerr.New(mongoerr.CommandNotSupported, "Cairn supports one 2dsphere field per index, found: %s", s.Key.String())
		case f.Geo:
			pos = i
		case f.Flat && flatPos >= 0:
			return badSpec("2d index can only have one 2d field: %s", s.Key.String())
		case f.Flat:
			flatPos = i
		}
	}
	v, hasVersion := d.Lookup("2dsphereIndexVersion")
	if pos < 0 && hasVersion {
		return badSpec("2dsphereIndexVersion is only valid for 2dsphere indexes")
	}
	if pos < 0 && flatPos < 0 {
		for _, o := range []string{"bits", "min", "max"} {
			if _, ok := d.Lookup(o); ok {
				return badSpec("%s is only valid for 2d indexes", o)
			}
		}
		return nil
	}
	if isText || s.Wildcard != nil || (pos >= 0 && flatPos >= 0) {
		return badSpec("Can't use more than one index plugin for a single index.")
	}
	for _, f := range s.Fields {
		if f.Hashed {
			return badSpec("Can't use more than one index plugin for a single index.")
		}
	}
	if flatPos >= 0 {
		return s.parseFlat(d, flatPos)
	}
	s.Geo = &GeoSpec{Field: pos, Version: 3}
	if hasVersion {
		n, ok := v.AsInt64()
		if !ok || !v.IsNumber() || n < 1 || n > 3 {
			return mongoerr.New(mongoerr.CannotCreateIndex, "unsupported geo index version { 2dsphereIndexVersion : %s }, only support versions: [1,2,3]", v.String())
		}
		s.Geo.Version = n
	}
	return nil
}

// geoRaw is the listIndexes form of a 2dsphere index: mongod adds
// 2dsphereIndexVersion when it is not given.
func (s *Spec) geoRaw(raw bson.Doc) bson.Doc {
	if _, ok := raw.Lookup("2dsphereIndexVersion"); ok {
		return raw
	}
	var b bson.Builder
	it := raw.Iter()
	for it.Next() {
		b.AppendElement(it.Element())
	}
	b.AppendInt32("2dsphereIndexVersion", int32(s.Geo.Version))
	return b.Finish()
}

// GeoValues returns the geometries a document holds at a 2dsphere path:
// the value at the path (through arrays of embedded documents), and for an
// array that is not a legacy pair, each of its elements. None: the field
// is missing or null.
func GeoValues(doc bson.Doc, parts []string) []bson.Value {
	var out []bson.Value
	geoCollect(bson.Value{Type: bson.TypeDocument, Data: doc}, parts, &out)
	return out
}

func geoCollect(v bson.Value, parts []string, out *[]bson.Value) {
	if len(parts) == 0 {
		switch {
		case v.Type == bson.TypeNull || v.Type == bson.TypeUndefined:
		case v.Type == bson.TypeArray && !isLegacyPair(v):
			it := v.Document().Iter()
			for it.Next() {
				if ev := it.Element().Value; ev.Type != bson.TypeNull {
					*out = append(*out, ev)
				}
			}
		default:
			*out = append(*out, v)
		}
		return
	}
	switch v.Type {
	case bson.TypeDocument:
		if child, ok := v.Document().Lookup(parts[0]); ok {
			geoCollect(child, parts[1:], out)
		}
	case bson.TypeArray:
		it := v.Document().Iter()
		for it.Next() {
			if ev := it.Element().Value; ev.Type == bson.TypeDocument {
				geoCollect(ev, parts, out)
			}
		}
	}
}

// isLegacyPair reports whether an array is [x, y, ...] with numbers.
func isLegacyPair(v bson.Value) bool {
	it := v.Document().Iter()
	return it.Next() && it.Element().Value.IsNumber()
}

// GeoCells returns the S2 cells that index a geometry.
func GeoCells(sh *geo.Shape) []s2.CellID {
	var cells []s2.CellID
	for _, p := range sh.Points {
		cells = append(cells, s2.CellIDFromLatLng(s2.LatLngFromPoint(p)))
	}
	rc := &s2.RegionCoverer{MaxLevel: s2.MaxLevel, MaxCells: geoCoverCells}
	for _, l := range sh.Lines {
		cells = append(cells, rc.Covering(l)...)
	}
	for _, p := range sh.Polygons {
		cells = append(cells, rc.Covering(p)...)
	}
	return cells
}

// AppendGeoCell appends the key of a cell id.
func AppendGeoCell(dst []byte, c s2.CellID) []byte { return appendCode(dst, uint64(c)) }

// appendCode appends the key of a cell id or geohash: an int64 with the
// top bit flipped, so that keys sort as the codes do unsigned.
func appendCode(dst []byte, c uint64) []byte {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], c^1<<63)
	return bson.AppendKey(dst, bson.Value{Type: bson.TypeInt64, Data: b[:]}, false)
}

// codeRanges turns inclusive ranges of codes into key ranges.
func codeRanges(spans [][2]uint64) []KeyRange {
	slices.SortFunc(spans, func(a, b [2]uint64) int { return cmp.Compare(a[0], b[0]) })
	var merged [][2]uint64
	for _, sp := range spans {
		if n := len(merged); n > 0 && merged[n-1][1] != math.MaxUint64 && sp[0] <= merged[n-1][1]+1 {
			merged[n-1][1] = max(merged[n-1][1], sp[1])
			continue
		}
		merged = append(merged, sp)
	}
	out := make([]KeyRange, len(merged))
	for i, sp := range merged {
		out[i] = KeyRange{Start: appendCode(nil, sp[0]), End: appendCode(nil, sp[1]+1)}
		if sp[1] == math.MaxUint64 {
			out[i].End, out[i].EndInclusivePrefix = appendCode(nil, sp[1]), true
		}
	}
	return out
}

// geoKeys returns a 2dsphere or 2d index's keys for doc: the cells (or
// geohashes) of each of its geometries, with the values of the other
// fields around them.
func (s *Spec) geoKeys(doc bson.Doc) ([][]byte, bool, error) {
	field := 0
	if s.Geo != nil {
		field = s.Geo.Field
	}
	gf := s.Fields[field]
	vals := GeoValues(doc, gf.Parts)
	if len(vals) == 0 {
		return nil, false, nil // not indexed: geo indexes are sparse
	}
	var cells []uint64
	for _, v := range vals {
		if s.Flat != nil {
			h, err := s.Flat.hash(doc, gf.Path, v)
			if err != nil {
				return nil, false, err
			}
			cells = append(cells, h)
			continue
		}
		sh, err := geo.ParseShape(v)
		if err == nil && !sh.Spherical() {
			err = &geo.Error{Msg: "longitude/latitude is out of bounds"}
		}
		if err != nil {
			id, _ := doc.Lookup("_id")
			return nil, false, mongoerr.New(mongoerr.GeoCannotExtractKeys, "Can't extract geo keys: { _id: %s, %s: %s }  %v", id.String(), gf.Path, v.String(), err)
		}
		for _, c := range GeoCells(sh) {
			cells = append(cells, uint64(c))
		}
	}
	// The other fields: every combination of their values (each missing
	// one as null).
	keys := [][]byte{nil}
	multikey := len(vals) > 1 || len(cells) > 1
	for i, f := range s.Fields {
		var next [][]byte
		if i == field {
			for _, k := range keys {
				for _, c := range cells {
					next = append(next, appendCode(append([]byte(nil), k...), c))
				}
			}
		} else {
			fv, isArray := fieldValues(doc, f.Parts)
			if len(fv) == 0 {
				fv = []bson.Value{nullValue}
			}
			multikey = multikey || isArray
			for _, k := range keys {
				for _, v := range fv {
					next = append(next, s.appendValue(append([]byte(nil), k...), v, f.Desc))
				}
			}
		}
		keys = next
	}
	slices.SortFunc(keys, bytes.Compare)
	return slices.CompactFunc(keys, bytes.Equal), multikey, nil
}

// geoQueryCells bounds the cells covering a query region.
const geoQueryCells = 20

// GeoKeyRanges returns the key ranges of a 2dsphere index (whose geo
// field comes first) that hold every geometry meeting region: for each
// covering cell, its descendants and its ancestors (see the top of this
// file). ok is false when the region cannot be covered (flat shapes).
func GeoKeyRanges(region geo.Region) ([]KeyRange, bool) {
	cells, ok := region.Cover(&s2.RegionCoverer{MaxLevel: s2.MaxLevel, MaxCells: geoQueryCells})
	if !ok {
		return nil, false
	}
	var spans [][2]uint64
	for _, c := range cells {
		spans = append(spans, [2]uint64{uint64(c.RangeMin()), uint64(c.RangeMax())})
		for l := 0; l < c.Level(); l++ {
			a := uint64(c.Parent(l))
			spans = append(spans, [2]uint64{a, a})
		}
	}
	return codeRanges(spans), true
}

// FlatSpec describes a 2d index: legacy coordinate pairs hashed on a grid.
type FlatSpec struct {
	Grid geo.Grid
}

// flatCoverCells bounds the grid cells a 2d index scan reads.
const flatCoverCells = 32

// parseFlat reads a 2d index's options (bits, min, max, as mongod's).
func (s *Spec) parseFlat(d bson.Doc, pos int) error {
	if pos != 0 {
		return mongoerr.New(mongoerr.Geo2DNotFirst, "2d has to be first in index")
	}
	g := geo.DefaultGrid
	num := func(name string) (float64, bool, error) {
		v, ok := d.Lookup(name)
		if !ok {
			return 0, false, nil
		}
		f, _ := v.AsFloat64()
		if !v.IsNumber() || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, false, badSpec("%s must be a number", name)
		}
		return f, true, nil
	}
	if b, ok, err := num("bits"); err != nil {
		return err
	} else if ok {
		if b < 1 || b > 32 || b != math.Trunc(b) {
			return mongoerr.New(mongoerr.GeoBitsOutOfRange, "bits in geo index must be between 1 and 32")
		}
		g.Bits = uint(b)
	}
	if v, ok, err := num("min"); err != nil {
		return err
	} else if ok {
		g.Min = v
	}
	if v, ok, err := num("max"); err != nil {
		return err
	} else if ok {
		g.Max = v
	}
	if !(g.Max > g.Min) {
		return mongoerr.New(mongoerr.GeoBoundsInvalid, "geo field bounds are not valid: max must be greater than min")
	}
	s.Flat = &FlatSpec{Grid: g}
	return nil
}

// hash reads a 2d field's value: a legacy pair inside the grid's bounds.
func (f *FlatSpec) hash(doc bson.Doc, path string, v bson.Value) (uint64, error) {
	p, err := geo.LegacyPoint(v)
	if err != nil {
		return 0, mongoerr.New(mongoerr.GeoLocationArrayBadFormat, "location object expected, location array not in correct format")
	}
	if !f.Grid.Contains(p) {
		id, _ := doc.Lookup("_id")
		return 0, mongoerr.New(mongoerr.GeoPointOutOfRange, "point not in interval of [ %g, %g ) :: caused by :: { _id: %s, %s: %s }", f.Grid.Min, f.Grid.Max, id.String(), path, v.String())
	}
	return f.Grid.Hash(p), nil
}

// FlatKeyRanges returns the key ranges of a 2d index holding every point
// of the box [lo, hi].
func (s *Spec) FlatKeyRanges(lo, hi r2.Point) []KeyRange {
	var spans [][2]uint64
	for _, r := range s.Flat.Grid.Cover(lo, hi, flatCoverCells) {
		spans = append(spans, [2]uint64{r.Lo, r.Hi})
	}
	return codeRanges(spans)
}
