package bson

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The BSON corpus (mongodb/specifications, source/bson-corpus) lives outside
// the repository: its licence forbids copying it in. Tests read it from
// ../shared/conformance/bson-corpus relative to the repository root.

type corpusFile struct {
	Description string `json:"description"`
	BSONType    string `json:"bson_type"`
	Deprecated  bool   `json:"deprecated"`
	Valid       []struct {
		Description       string `json:"description"`
		CanonicalBSON     string `json:"canonical_bson"`
		CanonicalExtJSON  string `json:"canonical_extjson"`
		RelaxedExtJSON    string `json:"relaxed_extjson"`
		DegenerateBSON    string `json:"degenerate_bson"`
		DegenerateExtJSON string `json:"degenerate_extjson"`
		Lossy             bool   `json:"lossy"`
	} `json:"valid"`
	DecodeErrors []struct {
		Description string `json:"description"`
		BSON        string `json:"bson"`
	} `json:"decodeErrors"`
	ParseErrors []struct {
		Description string `json:"description"`
		String      string `json:"string"`
	} `json:"parseErrors"`
}

// corpusDir finds shared/conformance/bson-corpus beside an ancestor of the
// working directory (the repository root's parent holds "shared").
func corpusDir() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		for _, c := range []string{
			filepath.Join(dir, "shared", "conformance", "bson-corpus"),
			filepath.Join(dir, "..", "shared", "conformance", "bson-corpus"),
		} {
			if st, err := os.Stat(c); err == nil && st.IsDir() {
				return c, true
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func loadCorpus(t *testing.T) map[string]corpusFile {
	t.Helper()
	dir, ok := corpusDir()
	if !ok {
		t.Skip("BSON corpus not found: expected ../shared/conformance/bson-corpus beside the repository root")
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Skipf("BSON corpus folder %s has no JSON files", dir)
	}
	files := make(map[string]corpusFile, len(paths))
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f corpusFile
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		files[filepath.Base(p)] = f
	}
	return files
}

func TestBSONCorpus(t *testing.T) {
	files := loadCorpus(t)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var valid, validOK, decode, decodeOK, parse, parseOK int
	for _, name := range names {
		f := files[name]
		for _, c := range f.Valid {
			valid++
			if err := checkValid(c.CanonicalBSON, c.CanonicalExtJSON, c.RelaxedExtJSON, c.DegenerateBSON, c.DegenerateExtJSON, c.Lossy); err != nil {
				t.Errorf("%s valid %q: %v", name, c.Description, err)
				continue
			}
			validOK++
		}
		for _, c := range f.DecodeErrors {
			decode++
			b, err := hex.DecodeString(c.BSON)
			if err != nil {
				t.Fatalf("%s: bad hex: %v", name, err)
			}
			if err := ValidateStrict(b, MaxDepth); err == nil {
				t.Errorf("%s decodeError %q: ValidateStrict accepted %s", name, c.Description, c.BSON)
				continue
			}
			decodeOK++
		}
		for _, c := range f.ParseErrors {
			parse++
			if err := checkParseError(f.BSONType, c.String); err != nil {
				t.Errorf("%s parseError %q: %v", name, c.Description, err)
				continue
			}
			parseOK++
		}
	}
	t.Logf("BSON corpus: valid %d/%d, decodeErrors %d/%d, parseErrors %d/%d", validOK, valid, decodeOK, decode, parseOK, parse)
}

func checkParseError(bsonType, s string) error {
	if strings.EqualFold(bsonType, "0x13") {
		if _, _, err := ParseDecimal128(s); err == nil {
			return fmt.Errorf("ParseDecimal128(%q) succeeded", s)
		}
		js, _ := json.Marshal(s)
		s = `{"d":{"$numberDecimal":` + string(js) + `}}`
	}
	for _, canonical := range []bool{false, true} {
		if d, err := UnmarshalExtJSON([]byte(s), canonical); err == nil {
			return fmt.Errorf("UnmarshalExtJSON(%s, canonical=%v) = %s", s, canonical, d)
		}
	}
	return nil
}

func checkValid(cBHex, cEJ, rEJ, dBHex, dEJ string, lossy bool) error {
	cB, err := hex.DecodeString(cBHex)
	if err != nil {
		return err
	}
	if err := ValidateStrict(cB, MaxDepth); err != nil {
		return fmt.Errorf("canonical BSON rejected: %w", err)
	}
	exerciseDoc(Doc(cB))
	// bson -> canonical extjson
	if err := expectJSON(Doc(cB), true, cEJ, "cB->cEJ"); err != nil {
		return err
	}
	if rEJ != "" {
		if err := expectJSON(Doc(cB), false, rEJ, "cB->rEJ"); err != nil {
			return err
		}
		d, err := UnmarshalExtJSON([]byte(rEJ), false)
		if err != nil {
			return fmt.Errorf("parse rEJ: %w", err)
		}
		if err := expectJSON(d, false, rEJ, "rEJ->rEJ"); err != nil {
			return err
		}
	}
	// canonical extjson -> bson -> canonical extjson
	d, err := UnmarshalExtJSON([]byte(cEJ), true)
	if err != nil {
		return fmt.Errorf("parse cEJ: %w", err)
	}
	if err := expectJSON(d, true, cEJ, "cEJ->cEJ"); err != nil {
		return err
	}
	if !lossy && !bytes.Equal(d, cB) {
		return fmt.Errorf("cEJ->BSON = %X, want %s", []byte(d), cBHex)
	}
	if dBHex != "" {
		dB, err := hex.DecodeString(dBHex)
		if err != nil {
			return err
		}
		if err := ValidateStrict(dB, MaxDepth); err != nil {
			return fmt.Errorf("degenerate BSON rejected: %w", err)
		}
		if err := expectJSON(Doc(dB), true, cEJ, "dB->cEJ"); err != nil {
			return err
		}
		// Cairn keeps BSON as raw bytes, so "native_to_bson" is the identity;
		// the canonical re-encoding goes through canonical Extended JSON.
		j, _ := Doc(dB).MarshalExtJSON(true)
		re, err := UnmarshalExtJSON(j, true)
		if err != nil {
			return fmt.Errorf("re-parse dB extjson: %w", err)
		}
		if !lossy && !bytes.Equal(re, cB) {
			return fmt.Errorf("dB re-encoded = %X, want %s", []byte(re), cBHex)
		}
	}
	if dEJ != "" {
		d, err := UnmarshalExtJSON([]byte(dEJ), false)
		if err != nil {
			return fmt.Errorf("parse dEJ: %w", err)
		}
		if err := expectJSON(d, true, cEJ, "dEJ->cEJ"); err != nil {
			return err
		}
		if !lossy && !bytes.Equal(d, cB) {
			return fmt.Errorf("dEJ->BSON = %X, want %s", []byte(d), cBHex)
		}
	}
	return nil
}

// exerciseDoc runs the read-side API over a valid document: formatting, keys
// and comparison must work on every corpus value.
func exerciseDoc(d Doc) {
	_ = d.String()
	v := vDoc(d)
	k := AppendKey(nil, v, false)
	if got, _, err := DecodeKey(k); err != nil || Compare(got, v) != 0 {
		panic(fmt.Sprintf("key round trip of %s failed: %v", d, err))
	}
	if Compare(v, v) != 0 {
		panic("document unequal to itself: " + d.String())
	}
}

func expectJSON(d Doc, canonical bool, want, what string) error {
	got, err := d.MarshalExtJSON(canonical)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	ng, err := normalizeJSON(got)
	if err != nil {
		return fmt.Errorf("%s: our output %s is not JSON: %w", what, got, err)
	}
	nw, err := normalizeJSON([]byte(want))
	if err != nil {
		return fmt.Errorf("%s: expected JSON: %w", what, err)
	}
	if ng != nw {
		return fmt.Errorf("%s:\n got  %s\n want %s", what, got, want)
	}
	return nil
}

// normalizeJSON rewrites JSON into a canonical text that keeps member order
// and distinguishes integers from floating-point numbers, but ignores
// whitespace, string escaping choices and float spelling (1.0E+2 = 100.0).
func normalizeJSON(data []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var sb strings.Builder
	if err := normalizeValue(dec, &sb); err != nil {
		return "", err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("trailing data")
	}
	return sb.String(), nil
}

func normalizeValue(dec *json.Decoder, sb *strings.Builder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch v := tok.(type) {
	case json.Delim:
		sb.WriteString(v.String())
		closing := json.Delim('}')
		if v == '[' {
			closing = ']'
		}
		for i := 0; dec.More(); i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			if v == '{' {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				kb, _ := json.Marshal(k)
				sb.Write(kb)
				sb.WriteByte(':')
			}
			if err := normalizeValue(dec, sb); err != nil {
				return err
			}
		}
		end, err := dec.Token()
		if err != nil || end != closing {
			return fmt.Errorf("unbalanced JSON")
		}
		sb.WriteString(closing.String())
	case json.Number:
		s := v.String()
		if strings.ContainsAny(s, ".eE") {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return err
			}
			sb.WriteString("F" + strconv.FormatFloat(f, 'g', -1, 64))
		} else {
			sb.WriteString("I" + s)
		}
	default:
		b, _ := json.Marshal(v)
		sb.Write(b)
	}
	return nil
}
