package expr

import (
	"strconv"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // Olson time zones without depending on the host's zoneinfo

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Date operators. Dates are milliseconds since the Unix epoch (UTC);
// timezones are Olson names or "+hh:mm"-style offsets.

func init() {
	for name, part := range map[string]func(t time.Time) int{
		"$year":       func(t time.Time) int { return t.Year() },
		"$month":      func(t time.Time) int { return int(t.Month()) },
		"$dayOfMonth": func(t time.Time) int { return t.Day() },
		"$hour":       func(t time.Time) int { return t.Hour() },
		"$minute":     func(t time.Time) int { return t.Minute() },
		"$second":     func(t time.Time) int { return t.Second() },
		"$millisecond": func(t time.Time) int {
			return t.Nanosecond() / 1e6
		},
		"$dayOfWeek":    func(t time.Time) int { return int(t.Weekday()) + 1 },
		"$dayOfYear":    func(t time.Time) int { return t.YearDay() },
		"$week":         sundayWeek,
		"$isoWeek":      func(t time.Time) int { _, w := t.ISOWeek(); return w },
		"$isoWeekYear":  func(t time.Time) int { y, _ := t.ISOWeek(); return y },
		"$isoDayOfWeek": isoDayOfWeek,
	} {
		register(name, parseDatePart(part))
	}
	register("$dateToString", parseDateToString)
	register("$dateFromString", parseDateFromString)
	register("$dateToParts", parseDateToParts)
	register("$dateFromParts", parseDateFromParts)
	register("$dateAdd", parseDateAdd("$dateAdd", 1))
	register("$dateSubtract", parseDateAdd("$dateSubtract", -1))
	register("$dateDiff", parseDateDiff)
	register("$dateTrunc", parseDateTrunc)
}

func sundayWeek(t time.Time) int { return (t.YearDay() - 1 + 7 - int(t.Weekday())) / 7 }

func isoDayOfWeek(t time.Time) int {
	d := int(t.Weekday())
	if d == 0 {
		return 7
	}
	return d
}

// ---- time zones ----

var tzCache sync.Map // string -> *time.Location

// parseTimezone resolves an Olson name or an offset "+hh", "+hhmm", "+hh:mm".
func parseTimezone(s string) (*time.Location, error) {
	if l, ok := tzCache.Load(s); ok {
		return l.(*time.Location), nil
	}
	loc, ok := offsetZone(s)
	if !ok {
		if s == "" || s == "Local" || strings.HasPrefix(s, "/") || strings.Contains(s, "..") {
			return nil, errf(mongoerr.UnknownTimeZone, "unrecognized time zone identifier: \"%s\"", s)
		}
		l, err := time.LoadLocation(s)
		if err != nil {
			return nil, errf(mongoerr.UnknownTimeZone, "unrecognized time zone identifier: \"%s\"", s)
		}
		loc = l
	}
	tzCache.Store(s, loc)
	return loc, nil
}

func offsetZone(s string) (*time.Location, bool) {
	if len(s) < 3 || (s[0] != '+' && s[0] != '-') {
		return nil, false
	}
	digits := strings.Replace(s[1:], ":", "", 1)
	if len(digits) != 2 && len(digits) != 4 {
		return nil, false
	}
	if strings.Contains(s[1:], ":") && len(s) != 6 {
		return nil, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return nil, false
		}
	}
	h, _ := strconv.Atoi(digits[:2])
	m := 0
	if len(digits) == 4 {
		m, _ = strconv.Atoi(digits[2:])
	}
	off := h*3600 + m*60
	if s[0] == '-' {
		off = -off
	}
	if off == 0 {
		return time.UTC, true
	}
	return time.FixedZone("", off), true
}

// tzOf evaluates an optional timezone node (nil = UTC). null → isNull.
func (e *Env) tzOf(tz node) (loc *time.Location, isNull bool, err error) {
	if tz == nil {
		return time.UTC, false, nil
	}
	v, err := tz.eval(e)
	if err != nil {
		return nil, false, err
	}
	if nullish(v) {
		return nil, true, nil
	}
	if v.Type != bson.TypeString {
		return nil, false, errf(mongoerr.TimezoneNotString, "timezone must evaluate to a string, found %s", typeName(v))
	}
	loc, err = parseTimezone(v.StringValue())
	return loc, false, err
}

// dateOf converts a value to ms since the epoch as a date operand.
func dateOf(v bson.Value) (int64, error) {
	switch v.Type {
	case bson.TypeDateTime:
		return v.Int64(), nil
	case bson.TypeTimestamp:
		t, _ := v.Timestamp()
		return int64(t) * 1000, nil
	case bson.TypeObjectID:
		secs := uint32(v.Data[0])<<24 | uint32(v.Data[1])<<16 | uint32(v.Data[2])<<8 | uint32(v.Data[3])
		return int64(secs) * 1000, nil
	}
	return 0, errf(mongoerr.ConvertToDateFailed, "can't convert from BSON type %s to Date", typeName(v))
}

func localTime(ms int64, loc *time.Location) time.Time { return time.UnixMilli(ms).In(loc) }

// ---- $year ... $millisecond ----

type datePartNode struct {
	date, tz node
	part     func(time.Time) int
}

func parseDatePart(part func(time.Time) int) opParser {
	return func(p *parser, name string, arg bson.Value) (node, error) {
		n := &datePartNode{part: part}
		switch arg.Type {
		case bson.TypeArray:
			vals := arg.Document().Values()
			if len(vals) != 1 {
				return nil, errf(mongoerr.DateExpressionArrayArity, "%s accepts exactly one argument if given an array, but was given %d", name, len(vals))
			}
			x, err := p.parse(vals[0])
			if err != nil {
				return nil, err
			}
			n.date = x
		case bson.TypeDocument:
			d := arg.Document()
			it := d.Iter()
			if it.Next() && strings.HasPrefix(it.Element().Key, "$") {
				x, err := p.parse(arg)
				if err != nil {
					return nil, err
				}
				n.date = x
				break
			}
			m, err := namedArgs(p, arg, []string{"date", "timezone"}, nil, func(key string) error {
				return errf(mongoerr.DateUnknownOption, "unrecognized option to %s: \"%s\"", name, key)
			})
			if err != nil {
				return nil, err
			}
			n.date, n.tz = m["date"], m["timezone"]
			if n.date == nil {
				return nil, errf(mongoerr.DateMissingDate, "missing 'date' argument to %s, provided: %s", name, d.String())
			}
		default:
			x, err := p.parse(arg)
			if err != nil {
				return nil, err
			}
			n.date = x
		}
		return n, nil
	}
}

func (n *datePartNode) eval(e *Env) (bson.Value, error) {
	v, err := n.date.eval(e)
	if err != nil {
		return missing, err
	}
	if nullish(v) {
		return vNull, nil
	}
	ms, err := dateOf(v)
	if err != nil {
		return missing, err
	}
	loc, tzNull, err := e.tzOf(n.tz)
	if err != nil {
		return missing, err
	}
	if tzNull {
		return vNull, nil
	}
	return e.int32(int32(n.part(localTime(ms, loc)))), nil
}

// ---- object-form argument helper ----

// objectArgs is namedArgs with the errors of the date operators that take
// an object: notObj's "only supports an object" and unknown's
// "Unrecognized argument".
func objectArgs(p *parser, name string, arg bson.Value, notObj, unknown int32, allowed ...string) (map[string]node, error) {
	return namedArgs(p, arg, allowed, func() error {
		return errf(notObj, "%s only supports an object as its argument", name)
	}, func(key string) error {
		return errf(unknown, "Unrecognized argument to %s: %s", name, key)
	})
}

// isoDate2Time returns the time of an ISO week date.
func isoDate2Time(year, week, wday, hour, min, sec, ms int, loc *time.Location) time.Time {
	// January 4th is always in week 1.
	jan4 := time.Date(year, 1, 4, 0, 0, 0, 0, time.UTC)
	monday := jan4.AddDate(0, 0, -(isoDayOfWeek(jan4) - 1))
	d := monday.AddDate(0, 0, (week-1)*7+(wday-1))
	return time.Date(d.Year(), d.Month(), d.Day(), hour, min, sec, ms*1e6, loc)
}

// ---- $dateToParts ----

type dateToPartsNode struct {
	date, tz, iso node
}

func parseDateToParts(p *parser, name string, arg bson.Value) (node, error) {
	m, err := objectArgs(p, name, arg, mongoerr.DateToPartsNotObject, mongoerr.DateToPartsUnknownArgument, "date", "timezone", "iso8601")
	if err != nil {
		return nil, err
	}
	if m["date"] == nil {
		return nil, errf(mongoerr.DateToPartsMissingDate, "Missing 'date' parameter to $dateToParts")
	}
	return &dateToPartsNode{date: m["date"], tz: m["timezone"], iso: m["iso8601"]}, nil
}

var (
	partKeys    = []string{"year", "month", "day", "hour", "minute", "second", "millisecond"}
	isoPartKeys = []string{"isoWeekYear", "isoWeek", "isoDayOfWeek", "hour", "minute", "second", "millisecond"}
)

func (n *dateToPartsNode) eval(e *Env) (bson.Value, error) {
	v, err := n.date.eval(e)
	if err != nil {
		return missing, err
	}
	loc, tzNull, err := e.tzOf(n.tz)
	if err != nil {
		return missing, err
	}
	if tzNull {
		return vNull, nil
	}
	iso := false
	if n.iso != nil {
		iv, err := n.iso.eval(e)
		if err != nil {
			return missing, err
		}
		if nullish(iv) {
			return vNull, nil
		}
		if iv.Type != bson.TypeBoolean {
			return missing, errf(mongoerr.ISO8601NotBool, "iso8601 must evaluate to a bool, found %s", typeName(iv))
		}
		iso = iv.Boolean()
	}
	if nullish(v) {
		return vNull, nil
	}
	ms, err := dateOf(v)
	if err != nil {
		return missing, err
	}
	t := localTime(ms, loc)
	var parts [7]int
	keys := partKeys
	if iso {
		y, w := t.ISOWeek()
		parts = [7]int{y, w, isoDayOfWeek(t), t.Hour(), t.Minute(), t.Second(), t.Nanosecond() / 1e6}
		keys = isoPartKeys
	} else {
		parts = [7]int{t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond() / 1e6}
	}
	var vals [7]bson.Value
	for i, p := range parts {
		vals[i] = e.int32(int32(p))
	}
	return e.document(keys, vals[:]), nil
}

// ---- $dateFromParts ----

type dateFromPartsNode struct {
	iso   bool
	parts [7]node // year|isoWeekYear, month|isoWeek, day|isoDayOfWeek, hour, minute, second, millisecond
	tz    node
}

func parseDateFromParts(p *parser, name string, arg bson.Value) (node, error) {
	m, err := objectArgs(p, name, arg, mongoerr.DateFromPartsNotObject, mongoerr.DateFromPartsUnknownArgument, "year", "month", "day", "hour", "minute", "second", "millisecond",
		"isoWeekYear", "isoWeek", "isoDayOfWeek", "timezone")
	if err != nil {
		return nil, err
	}
	n := &dateFromPartsNode{tz: m["timezone"]}
	iso := m["isoWeekYear"] != nil || m["isoWeek"] != nil || m["isoDayOfWeek"] != nil
	if m["year"] == nil && m["isoWeekYear"] == nil {
		return nil, errf(mongoerr.DateFromPartsMissingYear, "$dateFromParts requires either 'year' or 'isoWeekYear' to be present")
	}
	if m["year"] != nil && iso {
		return nil, errf(mongoerr.DateFromPartsNaturalWithISO, "$dateFromParts does not allow mixing natural dates with ISO dates")
	}
	if m["isoWeekYear"] != nil && (m["month"] != nil || m["day"] != nil) {
		return nil, errf(mongoerr.DateFromPartsISOWithNatural, "$dateFromParts does not allow mixing ISO dates with natural dates")
	}
	n.iso = iso
	keys := partKeys
	if iso {
		keys = isoPartKeys
	}
	for i, k := range keys {
		n.parts[i] = m[k]
	}
	return n, nil
}

// datePartValue evaluates one $dateFromParts field: ok is false when
// nullish; bounded fields must fit an int16.
func (e *Env) datePartValue(x node, name string, def int64, bounded bool) (int64, bool, error) {
	if x == nil {
		return def, true, nil
	}
	v, err := x.eval(e)
	if err != nil {
		return 0, false, err
	}
	if nullish(v) {
		return 0, false, nil
	}
	if !isIntegral(v) {
		return 0, false, errf(mongoerr.DatePartNotInteger, "'%s' must evaluate to an integer, found %s with value %s", name, typeName(v), v.String())
	}
	n := toLong(v)
	if bounded && (n < -32768 || n > 32767) {
		return 0, false, errf(mongoerr.DatePartOutOfRange, "'%s' must evaluate to a value in the range [-32768, 32767]; value %d is not in range", name, n)
	}
	return n, true, nil
}

func (n *dateFromPartsNode) eval(e *Env) (bson.Value, error) {
	keys := partKeys
	if n.iso {
		keys = isoPartKeys
	}
	var vals [7]int64
	// hour, minute, second, millisecond first, then the timezone, then the date
	for _, i := range []int{3, 4, 5, 6} {
		v, ok, err := e.datePartValue(n.parts[i], keys[i], 0, i < 5)
		if err != nil || !ok {
			return vNull, err
		}
		vals[i] = v
	}
	loc, tzNull, err := e.tzOf(n.tz)
	if err != nil {
		return missing, err
	}
	if tzNull {
		return vNull, nil
	}
	for i, def := range []int64{1970, 1, 1} {
		v, ok, err := e.datePartValue(n.parts[i], keys[i], def, i > 0)
		if err != nil || !ok {
			return vNull, err
		}
		vals[i] = v
	}
	if vals[0] < 1 || vals[0] > 9999 {
		if n.iso {
			return missing, errf(mongoerr.ISOWeekYearOutOfRange, "'isoWeekYear' must evaluate to an integer in the range 1 to 9999, found %d", vals[0])
		}
		return missing, errf(mongoerr.YearOutOfRange, "'year' must evaluate to an integer in the range 1 to 9999, found %d", vals[0])
	}
	var t time.Time
	if n.iso {
		t = isoDate2Time(int(vals[0]), 1, 1, 0, 0, 0, 0, loc)
		t = t.AddDate(0, 0, int(vals[1]-1)*7+int(vals[2]-1))
		t = time.Date(t.Year(), t.Month(), t.Day(), int(vals[3]), int(vals[4]), 0, 0, loc)
	} else {
		t = time.Date(int(vals[0]), time.Month(vals[1]), int(vals[2]), int(vals[3]), int(vals[4]), 0, 0, loc)
	}
	ms, ok := addMillis(t.UnixMilli(), vals[5], 1000)
	if ok {
		ms, ok = addMillis(ms, vals[6], 1)
	}
	if !ok {
		return missing, errf(mongoerr.Overflow, "date overflow in $dateFromParts")
	}
	return e.date(ms), nil
}

func addMillis(ms, n, unit int64) (int64, bool) {
	d, over := mulInt64(n, unit)
	if over {
		return 0, false
	}
	r, over := addInt64(ms, d)
	return r, !over
}
