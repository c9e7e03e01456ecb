package query

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cairndb/cairn/bson"
	"github.com/cockroachdb/datadriven"
)

// TestTranscripts runs the datadriven transcripts in testdata/. Each case's
// input is a specification on its first line and documents on the next:
//
//	match      prints the documents the filter matches (and the position
//	           a positional operator would use)
//	update     prints each document after the update (upsert: as an insert)
//	project    prints each document projected (the filter on the second line
//	           supplies positional matches)
//
// Errors print as "error <code>: <message>".
func TestTranscripts(t *testing.T) {
	for _, f := range []string{"testdata/match.txt", "testdata/update.txt", "testdata/project.txt"} {
		datadriven.RunTest(t, f, func(t *testing.T, td *datadriven.TestData) string {
			lines := strings.Split(strings.TrimSpace(td.Input), "\n")
			spec := d(t, lines[0])
			var out strings.Builder
			switch td.Cmd {
			case "match":
				flt, err := ParseFilter(spec, nil)
				if err != nil {
					return errLine(err)
				}
				for _, l := range lines[1:] {
					var md MatchDetails
					doc := d(t, l)
					if flt.MatchDetails(doc, &md) {
						out.WriteString(js(t, doc))
						if md.HasKey {
							fmt.Fprintf(&out, " $=%s", md.ElemMatchKey)
						}
						out.WriteString("\n")
					}
				}
				if out.Len() == 0 {
					return "no match\n"
				}
			case "update":
				v, _ := spec.Lookup("u")
				var filters []bson.Doc
				if af, ok := spec.Lookup("arrayFilters"); ok {
					for _, x := range bson.Doc(af.Data).Values() {
						filters = append(filters, bson.Doc(x.Data))
					}
				}
				var flt *Filter
				if q, ok := spec.Lookup("q"); ok {
					var err error
					if flt, err = ParseFilter(bson.Doc(q.Data), nil); err != nil {
						return errLine(err)
					}
				}
				upd, err := ParseUpdate(v, filters, nil)
				if err != nil {
					return errLine(err)
				}
				_, upsert := spec.Lookup("upsert")
				for _, l := range lines[1:] {
					doc := d(t, l)
					var md MatchDetails
					if flt != nil && !flt.MatchDetails(doc, &md) {
						out.WriteString("no match\n")
						continue
					}
					got, _, err := upd.Apply(nil, doc, &md, upsert)
					if err != nil {
						out.WriteString(errLine(err))
						continue
					}
					out.WriteString(js(t, got) + "\n")
				}
			case "project":
				p, err := ParseProjection(spec, nil)
				if err != nil {
					return errLine(err)
				}
				flt, err := ParseFilter(d(t, lines[1]), nil)
				if err != nil {
					return errLine(err)
				}
				for _, l := range lines[2:] {
					doc := d(t, l)
					var md MatchDetails
					flt.MatchDetails(doc, &md)
					got, err := p.Apply(nil, doc, &md)
					if err != nil {
						out.WriteString(errLine(err))
						continue
					}
					out.WriteString(js(t, got) + "\n")
				}
			default:
				t.Fatalf("%s: unknown command %q", td.Pos, td.Cmd)
			}
			return out.String()
		})
	}
}

func errLine(err error) string {
	return fmt.Sprintf("error %d: %s\n", errCode(err), err)
}
