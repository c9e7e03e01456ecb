package geo

import (
	"math"
	"testing"

	"github.com/cairndb/cairn/bson"
)

func docValue(t *testing.T, js string) bson.Value {
	t.Helper()
	d, err := bson.UnmarshalExtJSON([]byte(`{"v": `+js+`}`), false)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := d.Lookup("v")
	return v
}

func TestParseShape(t *testing.T) {
	for _, c := range []struct {
		js  string
		err bool
	}{
		{`{"type": "Point", "coordinates": [2.35, 48.85]}`, false},
		{`[2.35, 48.85]`, false},
		{`{"lng": 2.35, "lat": 48.85}`, false},
		{`{"type": "Point", "coordinates": [200, 0]}`, true},
		{`{"type": "Point", "coordinates": ["a", 0]}`, true},
		{`{"type": "LineString", "coordinates": [[0, 0]]}`, true},
		{`{"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1]]]}`, true},
		{`{"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [0, 0], [0, 0]]]}`, true},
		{`{"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]}`, false},
		{`{"type": "GeometryCollection", "geometries": []}`, true},
		{`{"type": "Circle", "coordinates": [0, 0]}`, true},
		{`"x"`, true},
	} {
		_, err := ParseShape(docValue(t, c.js))
		if (err != nil) != c.err {
			t.Errorf("%s: err = %v, want error %v", c.js, err, c.err)
		}
	}
}

func TestMinDistance(t *testing.T) {
	paris, _ := ParseShape(docValue(t, `{"type": "Point", "coordinates": [2.3522, 48.8566]}`))
	london, _ := ParseShape(docValue(t, `[-0.1276, 51.5072]`))
	d := paris.MinDistance(london.Points[0]).Radians() * EarthRadiusMeters
	if math.Abs(d-343_900) > 1000 {
		t.Errorf("Paris-London = %.0f m", d)
	}
	// Inside a polygon the distance is 0; outside, to the nearest edge.
	square, _ := ParseShape(docValue(t, `{"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]]}`))
	if d := square.MinDistance(paris.Points[0] /* far */); d == 0 {
		t.Error("Paris is not in the square")
	}
	in, _ := ParseShape(docValue(t, `[0.5, 0.5]`))
	if d := square.MinDistance(in.Points[0]); d != 0 {
		t.Errorf("inside: %v", d)
	}
}
