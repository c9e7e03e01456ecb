package expr

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// $dateToString and $dateFromString: dates written and read through
// format strings (or ISO 8601 forms), in a timezone.

// ---- $dateToString ----

type dateToStringNode struct {
	formatted // input: 'date'
}

func parseDateToString(p *parser, name string, arg bson.Value) (node, error) {
	m, err := objectArgs(p, name, arg, mongoerr.DateToStringNotObject, mongoerr.DateToStringUnknownArgument, "date", "format", "timezone", "onNull")
	if err != nil {
		return nil, err
	}
	if m["date"] == nil {
		return nil, errf(mongoerr.DateToStringMissingDate, "Missing 'date' parameter to $dateToString")
	}
	n := &dateToStringNode{formatted{input: m["date"], format: m["format"], tz: m["timezone"], onNull: m["onNull"]}}
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
	v, f, loc, tzNull, err := n.operands(e, mongoerr.DateToStringFormatNotString, "$dateToString")
	if err != nil {
		return missing, err
	}
	if nullish(v) {
		return n.nullAnswer(e)
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
	formatted // input: 'dateString'
	onError   node
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
	return &dateFromStringNode{formatted{input: m["dateString"], format: m["format"], tz: m["timezone"], onNull: m["onNull"]}, m["onError"]}, nil
}

func (n *dateFromStringNode) eval(e *Env) (bson.Value, error) {
	sv, f, loc, tzNull, err := n.operands(e, mongoerr.DateFromStringFormatNotString, "$dateFromString")
	if err != nil {
		return missing, err
	}
	if nullish(sv) {
		return n.nullAnswer(e)
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

// formatted is what $dateToString and $dateFromString share: an input
// read or written through an optional format in an optional timezone,
// and onNull's answer for a null or missing input.
type formatted struct {
	input, format, tz, onNull node
}

// operands evaluates the input, the format (code is the operator's error
// for a format that is not a string) and the timezone, in mongod's order.
func (o *formatted) operands(e *Env, code int32, op string) (v, format bson.Value, loc *time.Location, tzNull bool, err error) {
	if v, err = o.input.eval(e); err != nil {
		return missing, missing, nil, false, err
	}
	if format, err = evalFormat(e, o.format, code, op); err != nil {
		return missing, missing, nil, false, err
	}
	loc, tzNull, err = e.tzOf(o.tz)
	return v, format, loc, tzNull, err
}

// nullAnswer is the answer for a null or missing input: onNull's value,
// or null.
func (o *formatted) nullAnswer(e *Env) (bson.Value, error) {
	if o.onNull != nil {
		return o.onNull.eval(e)
	}
	return vNull, nil
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
