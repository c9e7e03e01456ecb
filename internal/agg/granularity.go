package agg

import (
	"math"
	"math/bits"

	"github.com/cairndb/cairn/bson"
)

// $bucketAuto's granularity: bucket boundaries rounded to a preferred
// number series (Renard, E, 1-2-5: base values scaled by powers of ten) or
// to powers of two.

var preferredSeries = map[string][]float64{
	"R5":  {10, 16, 25, 40, 63},
	"R10": {100, 125, 160, 200, 250, 315, 400, 500, 630, 800},
	"R20": {100, 112, 125, 140, 160, 180, 200, 224, 250, 280, 315, 355, 400, 450, 500, 560, 630, 710, 800, 900},
	"R40": {100, 106, 112, 118, 125, 132, 140, 150, 160, 170, 180, 190, 200, 212, 224, 236, 250, 265, 280, 300,
		315, 335, 355, 375, 400, 425, 450, 475, 500, 530, 560, 600, 630, 670, 710, 750, 800, 850, 900, 950},
	"R80": {103, 109, 115, 122, 128, 136, 145, 155, 165, 175, 185, 195, 206, 218, 230, 243, 258, 272, 290, 307,
		325, 345, 365, 387, 412, 437, 462, 487, 515, 545, 575, 615, 650, 690, 730, 775, 825, 875, 925, 975},
	"1-2-5": {10, 20, 50},
	"E6":    {10, 15, 22, 33, 47, 68},
	"E12":   {10, 12, 15, 18, 22, 27, 33, 39, 47, 56, 68, 82},
	"E24":   {10, 11, 12, 13, 15, 16, 18, 20, 22, 24, 27, 30, 33, 36, 39, 43, 47, 51, 56, 62, 68, 75, 82, 91},
	"E48": {100, 105, 110, 115, 121, 127, 133, 140, 147, 154, 162, 169, 178, 187, 196, 205, 215, 226, 237, 249,
		261, 274, 287, 301, 316, 332, 348, 365, 383, 402, 422, 442, 464, 487, 511, 536, 562, 590, 619, 649, 681,
		715, 750, 787, 825, 866, 909, 953},
	"E96": {100, 102, 105, 107, 110, 113, 115, 118, 121, 124, 127, 130, 133, 137, 140, 143, 147, 150, 154, 158,
		162, 165, 169, 174, 178, 182, 187, 191, 196, 200, 205, 210, 215, 221, 226, 232, 237, 243, 249, 255, 261,
		267, 274, 280, 287, 294, 301, 309, 316, 324, 332, 340, 348, 357, 365, 374, 383, 392, 402, 412, 422, 432,
		442, 453, 464, 475, 487, 499, 511, 523, 536, 549, 562, 576, 590, 604, 619, 634, 649, 665, 681, 698, 715,
		732, 750, 768, 787, 806, 825, 845, 866, 887, 909, 931, 953, 976},
	"E192": {100, 101, 102, 104, 105, 106, 107, 109, 110, 111, 113, 114, 115, 117, 118, 120, 121, 123, 124, 126,
		127, 129, 130, 132, 133, 135, 137, 138, 140, 142, 143, 145, 147, 149, 150, 152, 154, 156, 158, 160, 162,
		164, 165, 167, 169, 172, 174, 176, 178, 180, 182, 184, 187, 189, 191, 193, 196, 198, 200, 203, 205, 208,
		210, 213, 215, 218, 221, 223, 226, 229, 232, 234, 237, 240, 243, 246, 249, 252, 255, 258, 261, 264, 267,
		271, 274, 277, 280, 284, 287, 291, 294, 298, 301, 305, 309, 312, 316, 320, 324, 328, 332, 336, 340, 344,
		348, 352, 357, 361, 365, 370, 374, 379, 383, 388, 392, 397, 402, 407, 412, 417, 422, 427, 432, 437, 442,
		448, 453, 459, 464, 470, 475, 481, 487, 493, 499, 505, 511, 517, 523, 530, 536, 542, 549, 556, 562, 569,
		576, 583, 590, 597, 604, 612, 619, 626, 634, 642, 649, 657, 665, 673, 681, 690, 698, 706, 715, 723, 732,
		741, 750, 759, 768, 777, 787, 796, 806, 816, 825, 835, 845, 856, 866, 876, 887, 898, 909, 920, 931, 942,
		953, 965, 976, 988},
}

func validGranularity(g string) bool {
	_, ok := preferredSeries[g]
	return ok || g == "POWERSOF2"
}

// roundGranularity rounds the non-negative number v to the granularity:
// up to the smallest series value strictly greater, or down to the largest
// strictly smaller. Zero stays zero.
func roundGranularity(g string, v bson.Value, up bool) bson.Value {
	f, _ := v.AsFloat64()
	if f == 0 {
		return v
	}
	if g == "POWERSOF2" {
		return powerOfTwo(v, f, up)
	}
	series := preferredSeries[g]
	first, last := series[0], series[len(series)-1]
	m := 1.0
	if up {
		for f >= last*m {
			m *= 10
		}
		for f < first*m {
			prev := first * m
			m /= 10
			if f >= last*m {
				return doubleValue(prev)
			}
		}
		for _, s := range series {
			if f < s*m {
				return doubleValue(s * m)
			}
		}
		return doubleValue(last * m)
	}
	for f <= first*m {
		m /= 10
	}
	for f > last*m {
		prev := last * m
		m *= 10
		if f <= first*m {
			return doubleValue(prev)
		}
	}
	r := first * m
	for _, s := range series {
		if s*m < f {
			r = s * m
		}
	}
	return doubleValue(r)
}

// powerOfTwo is 2^e for the exponent just above (up) or below v, typed as
// $pow(2, e) would be: int, long when large, double for negative e.
func powerOfTwo(v bson.Value, f float64, up bool) bson.Value {
	var e int
	switch v.Type {
	case bson.TypeInt32, bson.TypeInt64:
		n, _ := v.AsInt64()
		lz := bits.LeadingZeros64(uint64(n))
		if up {
			e = 63 - lz + 1
		} else if lz+bits.TrailingZeros64(uint64(n)) == 63 {
			e = 63 - lz - 1
		} else {
			e = 63 - lz
		}
	default:
		if up {
			e = int(math.Floor(math.Log2(f)) + 1)
		} else {
			e = int(math.Ceil(math.Log2(f)) - 1)
		}
	}
	switch {
	case e < 0:
		return doubleValue(math.Pow(2, float64(e)))
	case e < 31:
		return intValue(int64(1) << e)
	case e < 63:
		return intValue(int64(1) << e)
	}
	return doubleValue(math.Pow(2, float64(e)))
}
