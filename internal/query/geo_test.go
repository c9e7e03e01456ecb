package query

import "testing"

func TestGeoMatch(t *testing.T) {
	square := `{"type": "Polygon", "coordinates": [[[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]]]}`
	within := func(shape string) string { return `{"loc": {"$geoWithin": ` + shape + `}}` }
	inSquare := within(`{"$geometry": ` + square + `}`)
	meets := func(geom string) string { return `{"loc": {"$geoIntersects": {"$geometry": ` + geom + `}}}` }
	runMatchCases(t, []matchCase{
		// $geoWithin $geometry: spherical, GeoJSON and legacy points
		{inSquare, `{"loc": {"type": "Point", "coordinates": [5, 5]}}`, true},
		{inSquare, `{"loc": {"type": "Point", "coordinates": [15, 5]}}`, false},
		{inSquare, `{"loc": [5, 5]}`, true},
		{inSquare, `{"loc": {"x": 5, "y": 5}}`, true},
		{inSquare, `{"loc": [[50, 50], [5, 5]]}`, true},
		{inSquare, `{"loc": "5,5"}`, false},
		{inSquare, `{"other": 1}`, false},
		{`{"a.loc": {"$geoWithin": {"$geometry": ` + square + `}}}`, `{"a": {"loc": [1, 1]}}`, true},
		{`{"loc": {"$within": {"$box": [[0, 0], [1, 1]]}}}`, `{"loc": [1, 1]}`, true},
		{inSquare, `{"loc": {"type": "LineString", "coordinates": [[1, 1], [2, 2]]}}`, true},
		{inSquare, `{"loc": {"type": "LineString", "coordinates": [[1, 1], [12, 2]]}}`, false},
		{inSquare, `{"loc": {"type": "Polygon", "coordinates": [[[1, 1], [2, 1], [2, 2], [1, 1]]]}}`, true},
		{inSquare, `{"loc": {"type": "MultiPoint", "coordinates": [[1, 1], [20, 2]]}}`, false},
		// clockwise rings mean the smaller region too
		{within(`{"$geometry": {"type": "Polygon", "coordinates": [[[0, 0], [0, 10], [10, 10], [10, 0], [0, 0]]]}}`), `{"loc": [5, 5]}`, true},
		// across the antimeridian: the ring's edges take the short way
		{within(`{"$geometry": {"type": "Polygon", "coordinates": [[[170, -10], [-170, -10], [-170, 10], [170, 10], [170, -10]]]}}`), `{"loc": [179.5, 0]}`, true},
		{within(`{"$geometry": {"type": "Polygon", "coordinates": [[[170, -10], [-170, -10], [-170, 10], [170, 10], [170, -10]]]}}`), `{"loc": [-175, 5]}`, true},
		{within(`{"$geometry": {"type": "Polygon", "coordinates": [[[170, -10], [-170, -10], [-170, 10], [170, 10], [170, -10]]]}}`), `{"loc": [0, 0]}`, false},
		{within(`{"$centerSphere": [[180, 0], 0.01]}`), `{"loc": [-179.9, 0]}`, true},
		// a hole
		{within(`{"$geometry": {"type": "Polygon", "coordinates": [[[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]], [[4, 4], [6, 4], [6, 6], [4, 6], [4, 4]]]}}`), `{"loc": [5, 5]}`, false},
		{within(`{"$geometry": {"type": "Polygon", "coordinates": [[[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]], [[4, 4], [6, 4], [6, 6], [4, 6], [4, 4]]]}}`), `{"loc": [2, 2]}`, true},
		{within(`{"$geometry": {"type": "MultiPolygon", "coordinates": [[[[0, 0], [1, 0], [1, 1], [0, 0]]], [[[20, 20], [30, 20], [30, 30], [20, 20]]]]}}`), `{"loc": [25, 22]}`, true},
		// mongod's big polygon: a clockwise ring around a small square is
		// everything but the square
		{within(`{"$geometry": {"type": "Polygon", "coordinates": [[[0, 0], [0, 1], [1, 1], [1, 0], [0, 0]]], "crs": {"type": "name", "properties": {"name": "urn:x-mongodb:crs:strictwinding:EPSG:4326"}}}}`), `{"loc": [50, 50]}`, true},
		{within(`{"$geometry": {"type": "Polygon", "coordinates": [[[0, 0], [0, 1], [1, 1], [1, 0], [0, 0]]], "crs": {"type": "name", "properties": {"name": "urn:x-mongodb:crs:strictwinding:EPSG:4326"}}}}`), `{"loc": [0.5, 0.5]}`, false},
		{within(`{"$geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]], "crs": {"type": "name", "properties": {"name": "urn:x-mongodb:crs:strictwinding:EPSG:4326"}}}}`), `{"loc": [0.5, 0.5]}`, true},
		{within(`{"$geometry": {"type": "Polygon", "coordinates": [[[0, 0], [0, 1], [1, 1], [1, 0], [0, 0]]], "crs": {"type": "name", "properties": {"name": "EPSG:4326"}}}}`), `{"loc": [0.5, 0.5]}`, true},
		// $centerSphere: 10 km around (0, 0); 0.05° of latitude is about 5.6 km
		{within(`{"$centerSphere": [[0, 0], 0.0015678963]}`), `{"loc": {"type": "Point", "coordinates": [0, 0.05]}}`, true},
		{within(`{"$centerSphere": [[0, 0], 0.0015678963]}`), `{"loc": [0, 0.2]}`, false},
		// flat shapes: legacy pairs only
		{within(`{"$box": [[0, 0], [10, 10]]}`), `{"loc": [5, 5]}`, true},
		{within(`{"$box": [[0, 0], [10, 10]]}`), `{"loc": [11, 5]}`, false},
		{within(`{"$box": [[0, 0], [10, 10]]}`), `{"loc": {"type": "Point", "coordinates": [5, 5]}}`, false},
		{within(`{"$box": [[0, 0], [10, 10]]}`), `{"loc": [500, 500]}`, false},
		{within(`{"$box": [[0, 0], [1000, 1000]]}`), `{"loc": [500, 500]}`, true},
		{within(`{"$center": [[0, 0], 5]}`), `{"loc": [3, 4]}`, true},
		{within(`{"$center": [[0, 0], 5]}`), `{"loc": [4, 4]}`, false},
		{within(`{"$polygon": [[0, 0], [3, 6], [6, 0]]}`), `{"loc": [3, 1]}`, true},
		{within(`{"$polygon": [[0, 0], [3, 6], [6, 0]]}`), `{"loc": [0, 0]}`, true},
		{within(`{"$polygon": [[0, 0], [3, 6], [6, 0]]}`), `{"loc": [6, 6]}`, false},
		// $geoIntersects
		{meets(square), `{"loc": {"type": "LineString", "coordinates": [[5, 5], [15, 5]]}}`, true},
		{meets(square), `{"loc": {"type": "LineString", "coordinates": [[20, 20], [30, 30]]}}`, false},
		{meets(square), `{"loc": {"type": "LineString", "coordinates": [[-5, 5], [15, 5]]}}`, true},
		{meets(square), `{"loc": {"type": "Polygon", "coordinates": [[[8, 8], [12, 8], [12, 12], [8, 12], [8, 8]]]}}`, true},
		{meets(square), `{"loc": {"type": "Polygon", "coordinates": [[[18, 18], [22, 18], [22, 22], [18, 22], [18, 18]]]}}`, false},
		{meets(square), `{"loc": [5, 5]}`, true},
		{meets(`{"type": "Point", "coordinates": [5, 5]}`), `{"loc": ` + square + `}`, true},
		{meets(`{"type": "Point", "coordinates": [5, 5]}`), `{"loc": {"type": "Point", "coordinates": [5, 5]}}`, true},
		{meets(`{"type": "Point", "coordinates": [5, 5]}`), `{"loc": {"type": "Point", "coordinates": [5, 6]}}`, false},
		{meets(`{"type": "LineString", "coordinates": [[0, -1], [0, 1]]}`), `{"loc": {"type": "LineString", "coordinates": [[-1, 0], [1, 0]]}}`, true},
		{meets(`{"type": "LineString", "coordinates": [[0, -1], [0, 1]]}`), `{"loc": {"type": "GeometryCollection", "geometries": [{"type": "Point", "coordinates": [50, 50]}, {"type": "Point", "coordinates": [0, 0.5]}]}}`, true},
	})
}

func TestGeoErrors(t *testing.T) {
	for _, c := range []struct {
		filter string
		msg    string
	}{
		{`{"loc": {"$geoWithin": 5}}`, "$geoWithin must be an object"},
		{`{"loc": {"$geoWithin": {"$geometry": {"type": "Point", "coordinates": [1, 2]}}}}`, ""},
		{`{"loc": {"$geoWithin": {"$foo": [1, 2]}}}`, ""},
		{`{"loc": {"$geoWithin": {"$geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 1]]]}}}}`, ""},
		{`{"loc": {"$geoWithin": {"$geometry": {"type": "Polygon", "coordinates": [[[0, 0], [200, 0], [1, 1], [0, 0]]]}}}}`, "longitude/latitude is out of bounds, lng: 200 lat: 0"},
		{`{"loc": {"$geoWithin": {"$centerSphere": [[0, 0], -1]}}}`, "radius must be a non-negative number"},
		{`{"loc": {"$geoWithin": {"$box": [[0, 0]]}}}`, ""},
		{`{"loc": {"$geoIntersects": {"$box": [[0, 0], [1, 1]]}}}`, ""},
		{`{"loc": {"$geoIntersects": {"$geometry": {"type": "Blob", "coordinates": []}}}}`, ""},
		{`{"loc": {"$geoWithin": {"$geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]], "crs": {"type": "name", "properties": {"name": "x"}}}}}}`, "Unknown CRS name: x"},
		{`{"loc": {"$geoIntersects": {"$geometry": {"type": "Point", "coordinates": [0, 0], "crs": {"type": "name", "properties": {"name": "urn:x-mongodb:crs:strictwinding:EPSG:4326"}}}}}}`, "Strict winding order CRS is only supported by polygon"},
		{`{"loc": {"$geoIntersects": {"$geometry": {"type": "Point", "coordinates": [0, 0], "crs": 5}}}}`, ""},
	} {
		_, err := ParseFilter(d(t, c.filter), nil)
		if errCode(err) != 2 || (c.msg != "" && err.Error() != c.msg) {
			t.Errorf("%s: %v (code %d), want BadValue %q", c.filter, err, errCode(err), c.msg)
		}
	}
}
