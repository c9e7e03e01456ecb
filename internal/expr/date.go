package expr

import (
	"fmt"
	"math"
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

// ---- $dateToString ----

type dateToStringNode struct {
	date, format, tz, onNull node
}

func parseDateToString(p *parser, name string, arg bson.Value) (node, error) {
	m, err := objectArgs(p, name, arg, mongoerr.DateToStringNotObject, mongoerr.DateToStringUnknownArgument, "date", "format", "timezone", "onNull")
	if err != nil {
		return nil, err
	}
	if m["date"] == nil {
		return nil, errf(mongoerr.DateToStringMissingDate, "Missing 'date' parameter to $dateToString")
	}
	n := &dateToStringNode{date: m["date"], format: m["format"], tz: m["timezone"], onNull: m["onNull"]}
	if c, ok := n.format.(constNode); ok && !nullish(c.v) {
		if c.v.Type != bson.TypeString {
			return nil, errf(mongoerr.DateToStringFormatNotString, "$dateToString requires that 'format' be a string, found: %s with value %s", typeName(c.v), c.v.String())
		}
		if err := validateFormat(c.v.StringValue()); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func validateFormat(f string) error {
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		if i+1 >= len(f) {
			return errf(mongoerr.DateFormatUnmatchedPercent, "Unmatched '%%' at end of format string")
		}
		switch f[i+1] {
		case 'd', 'G', 'H', 'j', 'L', 'm', 'M', 'S', 'u', 'U', 'V', 'w', 'Y', 'z', 'Z', '%', 'b', 'B':
		default:
			return errf(mongoerr.DateFormatInvalidCharacter, "Invalid format character '%%%c' in format string", f[i+1])
		}
		i++
	}
	return nil
}

const (
	defaultDateFormat     = "%Y-%m-%dT%H:%M:%S.%LZ"
	defaultDateFormatNonZ = "%Y-%m-%dT%H:%M:%S.%L"
)

func (n *dateToStringNode) eval(e *Env) (bson.Value, error) {
	v, err := n.date.eval(e)
	if err != nil {
		return missing, err
	}
	f, err := evalFormat(e, n.format, mongoerr.DateToStringFormatNotString, "$dateToString")
	if err != nil {
		return missing, err
	}
	loc, tzNull, err := e.tzOf(n.tz)
	if err != nil {
		return missing, err
	}
	if nullish(v) {
		if n.onNull != nil {
			return n.onNull.eval(e)
		}
		return vNull, nil
	}
	if tzNull {
		return vNull, nil
	}
	format := defaultDateFormat
	if n.format != nil {
		if nullish(f) {
			return vNull, nil
		}
		format = f.StringValue()
	} else if loc != time.UTC && loc.String() != "UTC" {
		format = defaultDateFormatNonZ
	}
	ms, err := dateOf(v)
	if err != nil {
		return missing, err
	}
	out, err := appendDate(e.scratch[:0], format, localTime(ms, loc))
	if err != nil {
		return missing, err
	}
	e.scratch = out
	return e.strBytes(out), nil
}

// appendDate appends t formatted by f (validated) to b.
func appendDate(b []byte, f string, t time.Time) ([]byte, error) {
	pad := func(n, w int) {
		if n < 0 {
			b = append(b, '-')
			n = -n
		}
		var digits [20]byte
		d := strconv.AppendInt(digits[:0], int64(n), 10)
		for i := len(d); i < w; i++ {
			b = append(b, '0')
		}
		b = append(b, d...)
	}
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' || i+1 >= len(f) {
			b = append(b, c)
			continue
		}
		i++
		switch f[i] {
		case 'Y':
			if t.Year() < 0 || t.Year() > 9999 {
				return nil, errf(mongoerr.DateToStringYearOutOfRange, "$dateToString is only defined on year 0-9999, tried to use year %d", t.Year())
			}
			pad(t.Year(), 4)
		case 'G':
			y, _ := t.ISOWeek()
			if y < 0 || y > 9999 {
				return nil, errf(mongoerr.DateToStringYearOutOfRange, "$dateToString is only defined on year 0-9999, tried to use year %d", y)
			}
			pad(y, 4)
		case 'm':
			pad(int(t.Month()), 2)
		case 'd':
			pad(t.Day(), 2)
		case 'H':
			pad(t.Hour(), 2)
		case 'M':
			pad(t.Minute(), 2)
		case 'S':
			pad(t.Second(), 2)
		case 'L':
			pad(t.Nanosecond()/1e6, 3)
		case 'j':
			pad(t.YearDay(), 3)
		case 'w':
			pad(int(t.Weekday())+1, 1)
		case 'u':
			pad(isoDayOfWeek(t), 1)
		case 'U':
			pad(sundayWeek(t), 2)
		case 'V':
			_, w := t.ISOWeek()
			pad(w, 2)
		case 'z':
			_, off := t.Zone()
			sign := byte('+')
			if off < 0 {
				sign, off = '-', -off
			}
			b = append(b, sign)
			pad(off/3600, 2)
			pad(off%3600/60, 2)
		case 'Z':
			_, off := t.Zone()
			if off >= 0 {
				b = append(b, '+')
			}
			b = strconv.AppendInt(b, int64(off/60), 10)
		case 'b':
			b = append(b, t.Month().String()[:3]...)
		case 'B':
			b = append(b, t.Month().String()...)
		case '%':
			b = append(b, '%')
		}
	}
	return b, nil
}

// ---- $dateFromString ----

type dateFromStringNode struct {
	str, format, tz, onError, onNull node
}

func parseDateFromString(p *parser, name string, arg bson.Value) (node, error) {
	if arg.Type != bson.TypeDocument {
		return nil, errf(mongoerr.DateFromStringNotObject, "$dateFromString only supports an object as an argument, found: %s", typeName(arg))
	}
	m, err := objectArgs(p, name, arg, mongoerr.DateFromStringNotObject, mongoerr.DateFromStringUnknownArgument, "dateString", "format", "timezone", "onError", "onNull")
	if err != nil {
		return nil, err
	}
	if m["dateString"] == nil {
		return nil, errf(mongoerr.DateFromStringMissingDateString, "Missing 'dateString' parameter to $dateFromString")
	}
	return &dateFromStringNode{str: m["dateString"], format: m["format"], tz: m["timezone"], onError: m["onError"], onNull: m["onNull"]}, nil
}

func (n *dateFromStringNode) eval(e *Env) (bson.Value, error) {
	sv, err := n.str.eval(e)
	if err != nil {
		return missing, err
	}
	f, err := evalFormat(e, n.format, mongoerr.DateFromStringFormatNotString, "$dateFromString")
	if err != nil {
		return missing, err
	}
	loc, tzNull, err := e.tzOf(n.tz)
	if err != nil {
		return missing, err
	}
	if nullish(sv) {
		if n.onNull != nil {
			return n.onNull.eval(e)
		}
		return vNull, nil
	}
	var ms int64
	switch {
	case sv.Type != bson.TypeString:
		err = convFail("$dateFromString requires that 'dateString' be a string, found: %s with value %s", typeName(sv), sv.String())
	case tzNull:
		return vNull, nil
	case n.format != nil && nullish(f):
		return vNull, nil
	default:
		var tzGiven *time.Location
		if n.tz != nil {
			tzGiven = loc
		}
		format := ""
		if n.format != nil {
			format = f.StringValue()
		}
		ms, err = parseDateString(sv.StringValue(), tzGiven, format)
	}
	if err != nil {
		if n.onError != nil && errCodeOf(err) == ConversionFailure {
			return n.onError.eval(e)
		}
		return missing, err
	}
	return e.date(ms), nil
}

// parseDateString parses s with format (or, when empty, ISO 8601 forms) in
// loc (nil = UTC, and a zone inside s is then allowed).
func parseDateString(s string, loc *time.Location, format string) (int64, error) {
	fail := func(why string) (int64, error) {
		return 0, convFail("Error parsing date string '%s'; %s", s, why)
	}
	if format == "" {
		format = "iso"
	}
	year, month, day, hour, min, sec, ms := -1, 1, 1, 0, 0, 0, 0
	isoYear, isoWeek, isoDay := -1, -1, -1
	yday := -1
	var zone *time.Location
	pos := 0
	num := func(minDigits, maxDigits int) (int, bool) {
		start := pos
		for pos < len(s) && pos-start < maxDigits && s[pos] >= '0' && s[pos] <= '9' {
			pos++
		}
		if pos-start < minDigits {
			return 0, false
		}
		n, _ := strconv.Atoi(s[start:pos])
		return n, true
	}
	parseZone := func() bool {
		if pos < len(s) && s[pos] == 'Z' {
			pos++
			zone = time.UTC
			return true
		}
		if pos >= len(s) || (s[pos] != '+' && s[pos] != '-') {
			return false
		}
		sign := 1
		if s[pos] == '-' {
			sign = -1
		}
		pos++
		h, ok := num(2, 2)
		if !ok {
			return false
		}
		m := 0
		if pos < len(s) && s[pos] == ':' {
			pos++
		}
		if pos < len(s) && s[pos] >= '0' && s[pos] <= '9' {
			if m, ok = num(2, 2); !ok {
				return false
			}
		}
		zone = time.FixedZone("", sign*(h*3600+m*60))
		return true
	}
	if format == "iso" {
		var ok bool
		if year, ok = num(4, 4); !ok {
			return fail("expected a four-digit year")
		}
		if pos >= len(s) || (s[pos] != '-' && s[pos] != '/') {
			return fail("expected a date separator")
		}
		sep := s[pos]
		pos++
		if month, ok = num(1, 2); !ok {
			return fail("expected a month")
		}
		if pos >= len(s) || s[pos] != sep {
			return fail("expected a date separator")
		}
		pos++
		if day, ok = num(1, 2); !ok {
			return fail("expected a day")
		}
		if pos < len(s) && (s[pos] == 'T' || s[pos] == ' ') {
			pos++
			if hour, ok = num(2, 2); !ok {
				return fail("expected an hour")
			}
			if pos >= len(s) || s[pos] != ':' {
				return fail("expected ':'")
			}
			pos++
			if min, ok = num(2, 2); !ok {
				return fail("expected a minute")
			}
			if pos < len(s) && s[pos] == ':' {
				pos++
				if sec, ok = num(2, 2); !ok {
					return fail("expected a second")
				}
				if pos < len(s) && s[pos] == '.' {
					pos++
					start := pos
					frac, ok := num(1, 9)
					if !ok {
						return fail("expected fractional seconds")
					}
					for d := pos - start; d < 3; d++ {
						frac *= 10
					}
					for d := pos - start; d > 3; d-- {
						frac /= 10
					}
					ms = frac
				}
			}
			if pos < len(s) && s[pos] == ' ' {
				pos++
			}
			if pos < len(s) && !parseZone() {
				// an Olson name after the time
				name := s[pos:]
				l, err := parseTimezone(name)
				if err != nil {
					return fail("unknown time zone '" + name + "'")
				}
				zone = l
				pos = len(s)
			}
		}
		if pos != len(s) {
			return fail("trailing data")
		}
	} else {
		for i := 0; i < len(format); i++ {
			c := format[i]
			if c != '%' {
				if pos >= len(s) || s[pos] != c {
					return fail(fmt.Sprintf("format character '%c' does not match", c))
				}
				pos++
				continue
			}
			i++
			var ok bool
			switch format[i] {
			case 'Y':
				year, ok = num(4, 4)
			case 'G':
				isoYear, ok = num(4, 4)
			case 'm':
				month, ok = num(1, 2)
			case 'd':
				day, ok = num(1, 2)
			case 'H':
				hour, ok = num(1, 2)
			case 'M':
				min, ok = num(1, 2)
			case 'S':
				sec, ok = num(1, 2)
			case 'L':
				start := pos
				ms, ok = num(1, 3)
				for d := pos - start; ok && d < 3; d++ {
					ms *= 10
				}
			case 'j':
				yday, ok = num(1, 3)
			case 'V':
				isoWeek, ok = num(1, 2)
			case 'u':
				isoDay, ok = num(1, 1)
			case 'w', 'U':
				_, ok = num(1, 2)
			case 'z':
				ok = parseZone()
			case 'Z':
				sign := 1
				if pos < len(s) && (s[pos] == '+' || s[pos] == '-') {
					if s[pos] == '-' {
						sign = -1
					}
					pos++
				}
				var mins int
				if mins, ok = num(1, 4); ok {
					zone = time.FixedZone("", sign*mins*60)
				}
			case '%':
				ok = pos < len(s) && s[pos] == '%'
				pos++
			case 'b', 'B':
				ok = false
				for mi := time.January; mi <= time.December; mi++ {
					name := mi.String()
					if format[i] == 'b' {
						name = name[:3]
					}
					if strings.HasPrefix(strings.ToLower(s[pos:]), strings.ToLower(name)) {
						month, ok = int(mi), true
						pos += len(name)
						break
					}
				}
			}
			if !ok {
				return fail(fmt.Sprintf("could not parse '%%%c'", format[i]))
			}
		}
		if pos != len(s) {
			return fail("trailing data")
		}
		if year < 0 && isoYear < 0 {
			return fail("an incomplete date/time string has been found, with elements missing")
		}
	}
	if zone != nil && loc != nil {
		return 0, errf(mongoerr.DateFromStringTimezoneTwice, "you cannot pass in a date/time string with time zone information ('%s') together with a timezone argument", s)
	}
	if zone == nil {
		zone = loc
	}
	if zone == nil {
		zone = time.UTC
	}
	if month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 59 {
		return fail("invalid date/time value")
	}
	var t time.Time
	switch {
	case isoYear >= 0:
		if isoWeek < 0 {
			isoWeek = 1
		}
		if isoDay < 0 {
			isoDay = 1
		}
		t = isoDate2Time(isoYear, isoWeek, isoDay, hour, min, sec, ms, zone)
	case yday >= 0:
		t = time.Date(year, 1, yday, hour, min, sec, ms*1e6, zone)
	default:
		t = time.Date(year, time.Month(month), day, hour, min, sec, ms*1e6, zone)
		if t.Day() != day {
			return fail("invalid day of month")
		}
	}
	return t.UnixMilli(), nil
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

// ---- units: $dateAdd, $dateSubtract, $dateDiff, $dateTrunc ----

type timeUnit int

const (
	unitMillisecond timeUnit = iota
	unitSecond
	unitMinute
	unitHour
	unitDay
	unitWeek
	unitMonth
	unitQuarter
	unitYear
)

var unitNames = map[string]timeUnit{
	"millisecond": unitMillisecond, "second": unitSecond, "minute": unitMinute, "hour": unitHour,
	"day": unitDay, "week": unitWeek, "month": unitMonth, "quarter": unitQuarter, "year": unitYear,
}

var unitMillis = [...]int64{1, 1000, 60000, 3600000, 86400000, 7 * 86400000}

func unitOf(v bson.Value, op string) (timeUnit, error) {
	if v.Type != bson.TypeString {
		return 0, errf(mongoerr.DateUnitNotString, "%s requires 'unit' to be a string, but got %s", op, typeName(v))
	}
	u, ok := unitNames[v.StringValue()]
	if !ok {
		return 0, errf(mongoerr.FailedToParse, "%s parameter 'unit' value parsing failed :: caused by :: unknown time unit value: %s", op, v.StringValue())
	}
	return u, nil
}

// tzWithContext is tzOf with MongoDB's "parameter 'timezone' value parsing
// failed" context added to errors.
func (e *Env) tzWithContext(tz node, op string) (*time.Location, bool, error) {
	loc, isNull, err := e.tzOf(tz)
	if me, ok := err.(*mongoerr.Error); ok {
		return nil, false, errf(me.Code, "%s parameter 'timezone' value parsing failed :: caused by :: %s", op, me.Message)
	}
	return loc, isNull, err
}

var weekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

// unitWeekZone evaluates the unit, startOfWeek and timezone arguments that
// $dateDiff and $dateTrunc share. null reports that one of them is null or
// missing, which makes the operator's result null.
func unitWeekZone(e *Env, unit, sowArg, tz node, op string) (u timeUnit, sow time.Weekday, loc *time.Location, null bool, err error) {
	uv, err := unit.eval(e)
	if err != nil || nullish(uv) {
		return 0, 0, nil, true, err
	}
	if u, err = unitOf(uv, op); err != nil {
		return 0, 0, nil, false, err
	}
	if sow, null, err = startOfWeek(e, sowArg, op, u); err != nil || null {
		return 0, 0, nil, null, err
	}
	loc, null, err = e.tzWithContext(tz, op)
	return u, sow, loc, null, err
}

func startOfWeek(e *Env, x node, op string, u timeUnit) (time.Weekday, bool, error) {
	if x == nil || u != unitWeek {
		return time.Sunday, false, nil
	}
	v, err := x.eval(e)
	if err != nil {
		return 0, false, err
	}
	if nullish(v) {
		return 0, true, nil
	}
	if v.Type != bson.TypeString {
		return 0, false, errf(mongoerr.StartOfWeekNotString, "%s requires 'startOfWeek' to be a string, but got %s", op, typeName(v))
	}
	d, ok := weekdays[strings.ToLower(v.StringValue())]
	if !ok {
		return 0, false, errf(mongoerr.StartOfWeekUnknown, "%s parameter 'startOfWeek' value cannot be recognized as a day of a week: %s", op, v.StringValue())
	}
	return d, false, nil
}

type dateAddNode struct {
	name                    string
	sign                    int64
	start, unit, amount, tz node
}

func parseDateAdd(op string, sign int64) opParser {
	return func(p *parser, name string, arg bson.Value) (node, error) {
		if arg.Type != bson.TypeDocument {
			return nil, errf(mongoerr.DateArithNotObject, "%s expects an object as its argument", op)
		}
		m, err := objectArgs(p, op, arg, mongoerr.DateArithNotObject, mongoerr.DateArithUnknownArgument, "startDate", "unit", "amount", "timezone")
		if me, ok := err.(*mongoerr.Error); ok && me.Code == mongoerr.DateArithUnknownArgument {
			me.Message += ". Expected arguments are startDate, unit, amount, and optionally timezone."
		}
		if err != nil {
			return nil, err
		}
		if m["startDate"] == nil || m["unit"] == nil || m["amount"] == nil {
			return nil, errf(mongoerr.DateArithMissingArgument, "%s requires startDate, unit, and amount to be present", op)
		}
		return &dateAddNode{name: op, sign: sign, start: m["startDate"], unit: m["unit"], amount: m["amount"], tz: m["timezone"]}, nil
	}
}

func (n *dateAddNode) eval(e *Env) (bson.Value, error) {
	sv, err := n.start.eval(e)
	if err != nil || nullish(sv) {
		return vNull, err
	}
	uv, err := n.unit.eval(e)
	if err != nil || nullish(uv) {
		return vNull, err
	}
	u, err := unitOf(uv, n.name)
	if err != nil {
		return missing, err
	}
	av, err := n.amount.eval(e)
	if err != nil || nullish(av) {
		return vNull, err
	}
	loc, tzNull, err := e.tzOf(n.tz)
	if err != nil {
		return missing, err
	}
	if tzNull {
		return vNull, nil
	}
	ms, err := dateOf(sv)
	if err != nil {
		return missing, errf(mongoerr.DateArithStartNotDate, "%s requires startDate to be convertible to a date", n.name)
	}
	if !isIntegral(av) {
		return missing, errf(mongoerr.DateArithAmountNotInteger, "%s expects integer amount of time units", n.name)
	}
	amt := toLong(av)
	if n.sign < 0 {
		if amt == math.MinInt64 {
			return missing, errf(mongoerr.DateSubtractBadAmount, "invalid $dateSubtract 'amount' parameter value: %d", amt)
		}
		amt = -amt
	}
	r, ok := dateAdd(ms, u, amt, loc)
	if !ok {
		return missing, errf(mongoerr.DateArithOverflow, "%s overflowed", n.name[1:])
	}
	return e.date(r), nil
}

// dateAdd adds amt units to ms in loc: calendar units keep the local
// time of day and clamp the day to the end of the month.
func dateAdd(ms int64, u timeUnit, amt int64, loc *time.Location) (int64, bool) {
	if u <= unitWeek && u != unitDay && u != unitWeek {
		d, over := mulInt64(amt, unitMillis[u])
		if over {
			return 0, false
		}
		r, over := addInt64(ms, d)
		return r, !over
	}
	if amt > 1e8 || amt < -1e8 {
		return 0, false
	}
	t := localTime(ms, loc)
	switch u {
	case unitDay, unitWeek:
		days := int(amt)
		if u == unitWeek {
			days *= 7
		}
		lt := time.Date(t.Year(), t.Month(), t.Day()+days, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc)
		return lt.UnixMilli(), true
	}
	months := int(amt)
	if u == unitQuarter {
		months *= 3
	} else if u == unitYear {
		months *= 12
	}
	total := t.Year()*12 + int(t.Month()) - 1 + months
	y, mo := total/12, time.Month(total%12+1)
	if total < 0 {
		return 0, false
	}
	day := t.Day()
	if last := daysIn(y, mo); day > last {
		day = last
	}
	lt := time.Date(y, mo, day, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc)
	return lt.UnixMilli(), true
}

func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

type dateDiffNode struct {
	start, end, unit, tz, sow node
}

func parseDateDiff(p *parser, name string, arg bson.Value) (node, error) {
	m, err := objectArgs(p, name, arg, mongoerr.DateDiffNotObject, mongoerr.DateDiffUnknownArgument, "startDate", "endDate", "unit", "timezone", "startOfWeek")
	if err != nil {
		return nil, err
	}
	switch {
	case m["startDate"] == nil:
		return nil, errf(mongoerr.DateDiffMissingStartDate, "Missing 'startDate' parameter to $dateDiff")
	case m["endDate"] == nil:
		return nil, errf(mongoerr.DateDiffMissingEndDate, "Missing 'endDate' parameter to $dateDiff")
	case m["unit"] == nil:
		return nil, errf(mongoerr.DateDiffMissingUnit, "Missing 'unit' parameter to $dateDiff")
	}
	return &dateDiffNode{start: m["startDate"], end: m["endDate"], unit: m["unit"], tz: m["timezone"], sow: m["startOfWeek"]}, nil
}

func (n *dateDiffNode) eval(e *Env) (bson.Value, error) {
	sv, err := n.start.eval(e)
	if err != nil || nullish(sv) {
		return vNull, err
	}
	ev, err := n.end.eval(e)
	if err != nil || nullish(ev) {
		return vNull, err
	}
	u, sow, loc, null, err := unitWeekZone(e, n.unit, n.sow, n.tz, "$dateDiff")
	if err != nil || null {
		return vNull, err
	}
	a, err := dateOf(sv)
	if err != nil {
		return missing, errf(mongoerr.DateArgNotDate, "$dateDiff requires 'startDate' to be a date, but got %s", typeName(sv))
	}
	b, err := dateOf(ev)
	if err != nil {
		return missing, errf(mongoerr.DateArgNotDate, "$dateDiff requires 'endDate' to be a date, but got %s", typeName(ev))
	}
	return e.int64(dateDiff(a, b, u, loc, sow)), nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// localMillis returns ms shifted by the zone offset at that instant.
func localMillis(ms int64, loc *time.Location) int64 {
	_, off := localTime(ms, loc).Zone()
	return ms + int64(off)*1000
}

func dateDiff(a, b int64, u timeUnit, loc *time.Location, sow time.Weekday) int64 {
	switch u {
	case unitMillisecond:
		return b - a
	case unitSecond, unitMinute, unitHour:
		la, lb := localMillis(a, loc), localMillis(b, loc)
		if u == unitHour {
			la, lb = a, b // hours are counted in absolute time unless the zone has a sub-hour offset
			if _, off := localTime(a, loc).Zone(); off%3600 != 0 {
				la, lb = localMillis(a, loc), localMillis(b, loc)
			}
		}
		return floorDiv(lb, unitMillis[u]) - floorDiv(la, unitMillis[u])
	case unitDay:
		return daysSinceEpoch(localTime(b, loc)) - daysSinceEpoch(localTime(a, loc))
	case unitWeek:
		da, db := daysSinceEpoch(localTime(a, loc)), daysSinceEpoch(localTime(b, loc))
		// 1970-01-01 was a Thursday
		shift := (int64(4) - int64(sow) + 7) % 7
		return floorDiv(db+shift, 7) - floorDiv(da+shift, 7)
	}
	ta, tb := localTime(a, loc), localTime(b, loc)
	ma := int64(ta.Year())*12 + int64(ta.Month()) - 1
	mb := int64(tb.Year())*12 + int64(tb.Month()) - 1
	switch u {
	case unitMonth:
		return mb - ma
	case unitQuarter:
		return floorDiv(mb, 3) - floorDiv(ma, 3)
	}
	return int64(tb.Year() - ta.Year())
}

func daysSinceEpoch(t time.Time) int64 {
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return floorDiv(d.Unix(), 86400)
}

type dateTruncNode struct {
	date, unit, bin, tz, sow node
}

func parseDateTrunc(p *parser, name string, arg bson.Value) (node, error) {
	m, err := objectArgs(p, name, arg, mongoerr.DateTruncNotObject, mongoerr.DateTruncUnknownArgument, "date", "unit", "binSize", "timezone", "startOfWeek")
	if me, ok := err.(*mongoerr.Error); ok && me.Code == mongoerr.DateTruncUnknownArgument {
		me.Message += ". Expected arguments are date, unit, and optionally, binSize, timezone, startOfWeek"
	}
	if err != nil {
		return nil, err
	}
	if m["date"] == nil {
		return nil, errf(mongoerr.DateTruncMissingDate, "Missing 'date' parameter to $dateTrunc")
	}
	if m["unit"] == nil {
		return nil, errf(mongoerr.DateTruncMissingUnit, "Missing 'unit' parameter to $dateTrunc")
	}
	return &dateTruncNode{date: m["date"], unit: m["unit"], bin: m["binSize"], tz: m["timezone"], sow: m["startOfWeek"]}, nil
}

func (n *dateTruncNode) eval(e *Env) (bson.Value, error) {
	dv, err := n.date.eval(e)
	if err != nil || nullish(dv) {
		return vNull, err
	}
	bin := int64(1)
	if n.bin != nil {
		bv, err := n.bin.eval(e)
		if err != nil || nullish(bv) {
			return vNull, err
		}
		if !isIntegral(bv) {
			return missing, errf(mongoerr.DateTruncBinSizeNotInt64, "$dateTrunc requires 'binSize' to be a 64-bit integer, but got value '%s' of type %s", bv.String(), typeName(bv))
		}
		if bin = toLong(bv); bin <= 0 {
			return missing, errf(mongoerr.DateTruncBinSizeNotPositive, "$dateTrunc requires 'binSize' to be greater than 0, but got value %d", bin)
		}
	}
	u, sow, loc, null, err := unitWeekZone(e, n.unit, n.sow, n.tz, "$dateTrunc")
	if err != nil || null {
		return vNull, err
	}
	ms, err := dateOf(dv)
	if err != nil {
		return missing, errf(mongoerr.DateArgNotDate, "$dateTrunc requires 'date' to be a date, but got %s", typeName(dv))
	}
	return e.date(dateTrunc(ms, u, bin, loc, sow)), nil
}

// dateTrunc truncates to bins of bin units aligned at 2000-01-01T00:00 in
// loc (for weeks, the first startOfWeek day on or after it).
func dateTrunc(ms int64, u timeUnit, bin int64, loc *time.Location, sow time.Weekday) int64 {
	t := localTime(ms, loc)
	switch u {
	case unitMillisecond, unitSecond, unitMinute, unitHour:
		size := unitMillis[u] * bin
		const ref = 946684800000 // 2000-01-01T00:00:00 local
		lm := localMillis(ms, loc)
		return ref + floorDiv(lm-ref, size)*size - (lm - ms)
	case unitDay, unitWeek:
		days := daysSinceEpoch(t)
		ref := daysSinceEpoch(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))
		size := bin
		if u == unitWeek {
			size *= 7
			// first sow on or after 2000-01-01 (a Saturday)
			ref += (int64(sow) - int64(time.Saturday) + 7) % 7
		}
		d := ref + floorDiv(days-ref, size)*size
		day := time.Unix(d*86400, 0).UTC()
		return time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, loc).UnixMilli()
	}
	months := int64(t.Year()-2000)*12 + int64(t.Month()) - 1
	size := bin
	switch u {
	case unitQuarter:
		size *= 3
	case unitYear:
		size *= 12
	}
	m := floorDiv(months, size) * size
	y := 2000 + floorDiv(m, 12)
	mo := m - floorDiv(m, 12)*12
	return time.Date(int(y), time.Month(mo+1), 1, 0, 0, 0, 0, loc).UnixMilli()
}

// evalFormat evaluates an optional 'format' argument: missing or null
// stay as they are; anything else must be a valid format string (code is
// the operator's error for a non-string).
func evalFormat(e *Env, format node, code int32, op string) (bson.Value, error) {
	if format == nil {
		return missing, nil
	}
	f, err := format.eval(e)
	if err != nil || nullish(f) {
		return f, err
	}
	if f.Type != bson.TypeString {
		return missing, errf(code, "%s requires that 'format' be a string, found: %s with value %s", op, typeName(f), f.String())
	}
	if err := validateFormat(f.StringValue()); err != nil {
		return missing, err
	}
	return f, nil
}
