package expr

import (
	"math"
	"strings"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Date arithmetic in calendar units: $dateAdd, $dateSubtract, $dateDiff
// and $dateTrunc.

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
