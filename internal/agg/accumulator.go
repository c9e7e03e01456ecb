package agg

import (
	"encoding/binary"
	"math"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// accumulator folds the values of one group.
type accumulator interface {
	add(v bson.Value) error
	result() bson.Value
}

type accSpec struct {
	name string
	op   string
	arg  Expr
}

func newAccumulator(op string) (accumulator, error) {
	switch op {
	case "$sum":
		return &sumAcc{}, nil
	case "$avg":
		return &avgAcc{}, nil
	case "$min":
		return &minMaxAcc{sign: -1}, nil
	case "$max":
		return &minMaxAcc{sign: 1}, nil
	case "$first":
		return &firstAcc{}, nil
	case "$last":
		return &lastAcc{}, nil
	case "$push":
		return &pushAcc{}, nil
	case "$addToSet":
		return &pushAcc{set: true}, nil
	case "$count":
		return &sumAcc{count: true}, nil
	}
	return nil, mongoerr.New(15952, "unknown group operator '%s'", op)
}

// sumAcc adds numbers as MongoDB's $sum does: int32 while the total fits,
// then int64, then double; any double makes the result a double.
// Non-numbers are ignored.
type sumAcc struct {
	count    bool
	i        int64
	f        float64
	isDouble bool
	isLong   bool
	overflow bool
}

func (s *sumAcc) add(v bson.Value) error {
	if s.count {
		s.i++
		return nil
	}
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		n, _ := v.AsInt64()
		if v.Type == bson.TypeInt64 {
			s.isLong = true
		}
		if !s.overflow {
			r := s.i + n
			if (n > 0 && r < s.i) || (n < 0 && r > s.i) {
				s.overflow = true
			} else {
				s.i = r
			}
		}
		s.f += float64(n)
	case bson.TypeDouble, bson.TypeDecimal128:
		f, _ := v.AsFloat64()
		s.f += f
		s.isDouble = true
	}
	return nil
}

func (s *sumAcc) result() bson.Value {
	switch {
	case s.isDouble || s.overflow:
		return doubleValue(s.f)
	case s.isLong || s.i > math.MaxInt32 || s.i < math.MinInt32:
		return int64Value(s.i)
	}
	return int32Value(int32(s.i))
}

type avgAcc struct {
	sum float64
	n   int64
}

func (a *avgAcc) add(v bson.Value) error {
	if f, ok := v.AsFloat64(); ok {
		a.sum += f
		a.n++
	}
	return nil
}

func (a *avgAcc) result() bson.Value {
	if a.n == 0 {
		return bson.Value{Type: bson.TypeNull}
	}
	return doubleValue(a.sum / float64(a.n))
}

type minMaxAcc struct {
	sign int
	v    bson.Value
}

func (m *minMaxAcc) add(v bson.Value) error {
	if v.Type == 0 || v.Type == bson.TypeNull || v.Type == bson.TypeUndefined {
		return nil
	}
	if m.v.Type == 0 || bson.Compare(v, m.v)*m.sign > 0 {
		m.v = cloneValue(v)
	}
	return nil
}

func (m *minMaxAcc) result() bson.Value {
	if m.v.Type == 0 {
		return bson.Value{Type: bson.TypeNull}
	}
	return m.v
}

type firstAcc struct {
	v   bson.Value
	set bool
}

func (f *firstAcc) add(v bson.Value) error {
	if !f.set {
		f.v, f.set = cloneValue(v), true
	}
	return nil
}

func (f *firstAcc) result() bson.Value {
	if f.v.Type == 0 {
		return bson.Value{Type: bson.TypeNull}
	}
	return f.v
}

type lastAcc struct{ v bson.Value }

func (l *lastAcc) add(v bson.Value) error { l.v = cloneValue(v); return nil }
func (l *lastAcc) result() bson.Value {
	if l.v.Type == 0 {
		return bson.Value{Type: bson.TypeNull}
	}
	return l.v
}

type pushAcc struct {
	set  bool
	vals []bson.Value
}

func (p *pushAcc) add(v bson.Value) error {
	if v.Type == 0 {
		return nil
	}
	if p.set {
		for _, have := range p.vals {
			if bson.Equal(have, v) {
				return nil
			}
		}
	}
	p.vals = append(p.vals, cloneValue(v))
	return nil
}

func (p *pushAcc) result() bson.Value {
	var b bson.Builder
	b.StartArray("a")
	for i, v := range p.vals {
		b.AppendValue(bson.Index(i), v)
	}
	b.End()
	v, _ := b.Finish().Lookup("a")
	return v
}

func cloneValue(v bson.Value) bson.Value {
	return bson.Value{Type: v.Type, Data: append([]byte(nil), v.Data...)}
}

func doubleValue(f float64) bson.Value {
	return bson.Value{Type: bson.TypeDouble, Data: binary.LittleEndian.AppendUint64(nil, math.Float64bits(f))}
}

func int64Value(n int64) bson.Value {
	return bson.Value{Type: bson.TypeInt64, Data: binary.LittleEndian.AppendUint64(nil, uint64(n))}
}

func int32Value(n int32) bson.Value {
	return bson.Value{Type: bson.TypeInt32, Data: binary.LittleEndian.AppendUint32(nil, uint32(n))}
}
