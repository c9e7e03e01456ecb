package expr

import (
	"sort"
	"testing"

	"github.com/cairndb/cairn/bson"
)

// exprGen builds random expression documents from fuzz bytes: operators
// drawn from the registry with random operands, field paths, variables and
// literals of every kind, so the fuzzer reaches every operator.
type exprGen struct {
	data []byte
	pos  int
}

func (g *exprGen) next() int {
	if g.pos >= len(g.data) {
		return 0
	}
	b := g.data[g.pos]
	g.pos++
	return int(b)
}

var opNames []string // filled by FuzzGrammar (operators register in init)

func loadOpNames() {
	if opNames != nil {
		return
	}
	for k := range operators {
		opNames = append(opNames, k)
	}
	sort.Strings(opNames)
}

var namedArgKeys = []string{"input", "as", "in", "cond", "limit", "vars", "initialValue", "date", "timezone",
	"format", "onNull", "onError", "to", "unit", "amount", "startDate", "endDate", "binSize", "startOfWeek",
	"regex", "options", "find", "replacement", "chars", "field", "value", "branches", "default", "case", "then",
	"if", "else", "inputs", "defaults", "useLongestLength", "sortBy", "dateString", "year", "month", "day",
	"hour", "isoWeekYear", "iso8601", "n", "output"}

var genStrings = []string{"$a", "$b.c", "$arr", "$s", "$d", "$$this", "$$value", "$$ROOT", "$$CURRENT", "$$NOW",
	"$$REMOVE", "x", "", "abc", "%Y-%m-%d", "day", "week", "month", "hour", "int", "string", "decimal", "date",
	"UTC", "+05:30", "America/New_York", "a|b", "(x)*", "2021-01-02T03:04:05Z", "12", "monday"}

func (g *exprGen) value(b *bson.Builder, key string, depth int) {
	k := g.next()
	if depth > 5 {
		k %= 8
	}
	switch k % 16 {
	case 0:
		b.AppendInt32(key, int32(g.next()-128))
	case 1:
		b.AppendInt64(key, int64(g.next())<<uint(g.next()%64))
	case 2:
		b.AppendDouble(key, float64(g.next()-128)/float64(g.next()%7+1))
	case 3:
		hi, lo := testDecimal(g.next() - 100)
		b.AppendDecimal128(key, hi, lo)
	case 4, 5:
		b.AppendString(key, genStrings[g.next()%len(genStrings)])
	case 6:
		b.AppendBool(key, g.next()%2 == 0)
	case 7:
		switch g.next() % 3 {
		case 0:
			b.AppendNull(key)
		case 1:
			b.AppendDateTime(key, int64(g.next())*86400000*30)
		default:
			b.AppendObjectID(key, [12]byte{byte(g.next()), 1, 2, 3})
		}
	case 8, 9, 10, 11:
		b.StartDocument(key)
		b.StartArray(opNames[(g.next()<<8|g.next())%len(opNames)])
		n := g.next() % 4
		for i := 0; i < n; i++ {
			g.value(b, bson.Index(i), depth+1)
		}
		b.End()
		b.End()
	case 12, 13:
		b.StartDocument(key)
		op := opNames[(g.next()<<8|g.next())%len(opNames)]
		b.StartDocument(op)
		n := g.next() % 5
		for i := 0; i < n; i++ {
			g.value(b, namedArgKeys[g.next()%len(namedArgKeys)], depth+1)
		}
		b.End()
		b.End()
	case 14:
		b.StartArray(key)
		n := g.next() % 4
		for i := 0; i < n; i++ {
			g.value(b, bson.Index(i), depth+1)
		}
		b.End()
	default:
		b.StartDocument(key)
		n := g.next() % 3
		for i := 0; i < n; i++ {
			g.value(b, namedArgKeys[g.next()%len(namedArgKeys)], depth+1)
		}
		b.End()
	}
}

// testDecimal returns a small decimal128 (coefficient k, exponent -2).
func testDecimal(k int) (hi, lo uint64) {
	d := decFromInt(int64(k))
	d.exp = -2
	return d.pack()
}

func FuzzGrammar(f *testing.F) {
	loadOpNames()
	for i := 0; i < 64; i++ {
		seed := make([]byte, 64)
		for j := range seed {
			seed[j] = byte(i*31 + j*17)
		}
		f.Add(seed)
	}
	oldWork, oldArena := maxWork, maxArena
	maxWork, maxArena = 200_000, 16<<20
	defer func() { maxWork, maxArena = oldWork, oldArena }()
	root := doc(f, fuzzDocs[0])
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &exprGen{data: data}
		var b bson.Builder
		g.value(&b, "e", 0)
		ev, _ := b.Finish().Lookup("e")
		x, err := Parse(ev, &Options{})
		if err != nil {
			if errCode(err) == 0 {
				t.Fatalf("parse error without a code: %v", err)
			}
			return
		}
		env := NewEnv(nil)
		v, err := Eval(x, root, env)
		if err != nil {
			if errCode(err) == 0 {
				t.Fatalf("eval error without a code: %v", err)
			}
			return
		}
		if v.Type != 0 {
			var vb bson.Builder
			vb.AppendValue("v", v)
			if err := bson.Validate(vb.Finish(), 200); err != nil {
				t.Fatalf("invalid result %v for %v: %v", v, ev, err)
			}
		}
	})
}
