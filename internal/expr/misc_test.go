package expr

import "testing"

func TestMisc(t *testing.T) {
	runCases(t, []evalCase{
		{expr: `{"$bitAnd": [12, 10]}`, want: `int 8`},
		{expr: `{"$bitOr": [12, {"$numberLong": "1"}]}`, want: `long 13`},
		{expr: `{"$bitXor": [12, 10]}`, want: `int 6`},
		{expr: `{"$bitNot": 0}`, want: `int -1`},
		{expr: `{"$bitAnd": [1, 1.0]}`, code: 14},
		{expr: `{"$sin": 0}`, want: `double 0.0`},
		{expr: `{"$acos": 1}`, want: `double 0.0`},
		{expr: `{"$asin": 2}`, code: 50989},
		{expr: `{"$radiansToDegrees": {"$numberDecimal": "0"}}`, want: `decimal {"$numberDecimal":"0"}`},
		{expr: `{"$atan2": [0, 1]}`, want: `double 0.0`},
		{expr: `{"$sum": [1, 2, "x", 3.5]}`, want: `double 6.5`},
		{expr: `{"$sum": "$arr"}`, doc: `{"arr": [1, 2, 3]}`, want: `int 6`},
		{expr: `{"$sum": "$missing"}`, want: `int 0`},
		{expr: `{"$avg": "$arr"}`, doc: `{"arr": [1, 2]}`, want: `double 1.5`},
		{expr: `{"$avg": ["a"]}`, want: `null null`},
		{expr: `{"$max": "$arr"}`, doc: `{"arr": [1, null, 7, 3]}`, want: `int 7`},
		{expr: `{"$min": [4, null, 2]}`, want: `int 2`},
		{expr: `{"$min": []}`, want: `null null`},
		{expr: `{"$stdDevPop": [[1, 3]]}`, want: `double 1.0`},
		{expr: `{"$median": {"input": [3, 1, 2, "x"], "method": "approximate"}}`, want: `double 2.0`},
		{expr: `{"$percentile": {"input": [1, 2, 3, 4], "p": [0.25, 1], "method": "approximate"}}`, want: `array [1.0,4.0]`},
		{expr: `{"$median": {"input": [1]}}`, code: 2},
		{expr: `{"$firstN": {"input": [1, 2, 3], "n": 2}}`, want: `array [1,2]`},
		{expr: `{"$lastN": {"input": [1, 2, 3], "n": 2}}`, want: `array [2,3]`},
		{expr: `{"$maxN": {"input": [1, null, 3, 2], "n": 2}}`, want: `array [3,2]`},
		{expr: `{"$minN": {"input": [1, null, 3, 2], "n": 5}}`, want: `array [1,2,3]`},
		{expr: `{"$firstN": {"input": 1, "n": 2}}`, code: 5788200},
		{expr: `{"$binarySize": "héllo"}`, want: `int 6`},
		{expr: `{"$bsonSize": {"a": 1}}`, want: `int 12`},
		{expr: `{"$bsonSize": 1}`, code: 31393},
		{expr: `{"$tsSecond": {"$timestamp": {"t": 5, "i": 7}}}`, want: `long 5`},
		{expr: `{"$tsIncrement": {"$timestamp": {"t": 5, "i": 7}}}`, want: `long 7`},
		{expr: `{"$sampleRate": 1}`, want: `bool true`},
		{expr: `{"$sampleRate": 2}`, code: 31291},
		{expr: `{"$meta": "textScore"}`, code: 40218}, // no $text score here
		{expr: `{"$meta": "randVal"}`, code: 238},
		{expr: `{"$meta": "bogus"}`, code: 17308},
		{expr: `{"$function": {"body": "", "args": [], "lang": "js"}}`, code: 31264}, // no Scripts in these Options
	})
}

// TestTextScoreMeta: with a score cell, {$meta: "textScore"} reads it at
// each evaluation.
func TestTextScoreMeta(t *testing.T) {
	score := 0.0
	opts := &Options{TextScore: &score}
	x, err := Parse(value(t, `{"$add": [{"$meta": "textScore"}, 1]}`), opts)
	if err != nil {
		t.Fatal(err)
	}
	env := NewEnv(opts)
	for _, sc := range []float64{0.75, 2} {
		score = sc
		v, err := Eval(x, doc(t, "{}"), env)
		if err != nil || show(t, v) != "double "+map[float64]string{0.75: "1.75", 2: "3.0"}[sc] {
			t.Errorf("score %v: %s, %v", sc, show(t, v), err)
		}
	}
	// Command-level let cannot read a document's score.
	if _, err := Parse(value(t, `"$$s"`), &Options{TextScore: &score, Let: doc(t, `{"s": {"$meta": "textScore"}}`)}); errCode(err) != 40218 {
		t.Errorf("let: %v", err)
	}
}
