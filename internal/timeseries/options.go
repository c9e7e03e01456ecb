package timeseries

import (
	"math"
	"strings"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// Options are a time-series collection's options as create takes them and
// listCollections shows them.
type Options struct {
	TimeField string
	// MetaField is empty when the collection has none.
	MetaField string
	// Granularity is "seconds", "minutes" or "hours"; empty when the
	// collection was created with bucketMaxSpanSeconds and
	// bucketRoundingSeconds instead.
	Granularity string
	// MaxSpan is bucketMaxSpanSeconds: a bucket's measurements lie within
	// MaxSpan seconds of its start.
	MaxSpan int64
	// Rounding is bucketRoundingSeconds: a bucket's start is its first
	// measurement's time rounded down to a multiple of Rounding seconds.
	Rounding int64
	// roundingGiven: bucketRoundingSeconds is listed (no granularity).
	roundingGiven bool
}

// Bucket bounds of mongod's IDL (bucketMaxSpanSeconds and
// bucketRoundingSeconds lie in [1, 365 days]).
const maxBucketSeconds = 31536000

// Bucket limits, mongod's defaults of timeseriesBucketMaxCount and
// timeseriesBucketMaxSize.
const (
	MaxCount = 1000
	MaxSize  = 125 * 1024
)

// BucketsPrefix starts the name of every buckets collection.
const BucketsPrefix = "system.buckets."

// BucketsName is the buckets collection of time-series collection name.
func BucketsName(name string) string { return BucketsPrefix + name }

// spanOf and roundingOf are mongod's getMaxSpanSecondsFromGranularity and
// getBucketRoundingSecondsFromGranularity.
func spanOf(g string) int64 {
	switch g {
	case "minutes":
		return 60 * 60 * 24
	case "hours":
		return 60 * 60 * 24 * 30
	}
	return 60 * 60
}

func roundingOf(g string) int64 {
	switch g {
	case "minutes":
		return 60 * 60
	case "hours":
		return 60 * 60 * 24
	}
	return 60
}

func badType(field string, t bson.Type, want string) error {
	return mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s' is the wrong type '%s', expected type '%s'", field, t, want)
}

// seconds reads bucketMaxSpanSeconds or bucketRoundingSeconds (a whole
// number in [1, 31536000]).
func seconds(field string, v bson.Value) (int64, error) {
	if !v.IsNumber() || v.Type == bson.TypeDecimal128 {
		return 0, mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s' is the wrong type '%s', expected types '[long, int, decimal, double]'", field, v.Type)
	}
	f, _ := v.AsFloat64()
	if f != math.Trunc(f) {
		return 0, mongoerr.New(mongoerr.BadValue, "BSON field '%s' value must be an integer", field)
	}
	if f < 1 || f > maxBucketSeconds {
		return 0, mongoerr.New(mongoerr.BadValue, "BSON field '%s' value must be >= 1 and <= %d, actual value '%d'", field, maxBucketSeconds, int64(f))
	}
	return int64(f), nil
}

// Parse reads create's timeseries option (cmd names the command in
// errors: "create" or "$out"), with mongod's checks and defaults.
func Parse(cmd string, v bson.Value) (*Options, error) {
	if v.Type != bson.TypeDocument {
		return nil, badType(cmd+".timeseries", v.Type, "object")
	}
	o := &Options{}
	hasTime, hasSpan, hasRounding := false, false, false
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		field := cmd + ".timeseries." + e.Key
		switch e.Key {
		case "timeField":
			if e.Value.Type != bson.TypeString {
				return nil, badType(field, e.Value.Type, "string")
			}
			o.TimeField, hasTime = e.Value.StringValue(), true
		case "metaField":
			if e.Value.Type != bson.TypeString {
				return nil, badType(field, e.Value.Type, "string")
			}
			o.MetaField = e.Value.StringValue()
		case "granularity":
			if e.Value.Type != bson.TypeString {
				return nil, badType(field, e.Value.Type, "string")
			}
			switch g := e.Value.StringValue(); g {
			case "seconds", "minutes", "hours":
				o.Granularity = g
			default:
				return nil, mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field '%s' is not a valid value.", g, field)
			}
		case "bucketMaxSpanSeconds":
			n, err := seconds(field, e.Value)
			if err != nil {
				return nil, err
			}
			o.MaxSpan, hasSpan = n, true
		case "bucketRoundingSeconds":
			n, err := seconds(field, e.Value)
			if err != nil {
				return nil, err
			}
			o.Rounding, hasRounding = n, true
		default:
			return nil, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '%s' is an unknown field.", field)
		}
	}
	if !hasTime {
		return nil, mongoerr.New(mongoerr.IDLFailedToParse, "BSON field '%s.timeseries.timeField' is missing but a required field", cmd)
	}
	if err := o.checkBucketing(hasSpan, hasRounding); err != nil {
		return nil, err
	}
	if strings.Contains(o.TimeField, ".") {
		return nil, mongoerr.New(mongoerr.InvalidOptions, "'timeField' must be a top-level field and not contain a '.'")
	}
	if o.MetaField != "" {
		switch {
		case o.MetaField == "_id":
			return nil, mongoerr.New(mongoerr.InvalidOptions, "'metaField' cannot be \"_id\"")
		case o.MetaField == o.TimeField:
			return nil, mongoerr.New(mongoerr.InvalidOptions, "'metaField' cannot be the same as 'timeField'")
		case strings.Contains(o.MetaField, "."):
			return nil, mongoerr.New(mongoerr.InvalidOptions, "'metaField' must be a top-level field and not contain a '.'")
		}
	}
	return o, nil
}

// checkBucketing is mongod's checkBucketingParameters with defaults set.
func (o *Options) checkBucketing(hasSpan, hasRounding bool) error {
	if o.Granularity != "" {
		if want := spanOf(o.Granularity); hasSpan && o.MaxSpan != want {
			return mongoerr.New(mongoerr.InvalidOptions, "Time-series 'bucketMaxSpanSeconds' cannot be set to a value other than the default of %d for the provided granularity", want)
		}
		if hasRounding {
			return mongoerr.New(mongoerr.InvalidOptions, "Time-series 'bucketRoundingSeconds' cannot be set alongside the granularity parameter")
		}
		o.MaxSpan, o.Rounding = spanOf(o.Granularity), roundingOf(o.Granularity)
		return nil
	}
	if hasSpan || hasRounding {
		if !hasSpan || !hasRounding || o.MaxSpan != o.Rounding {
			return mongoerr.New(mongoerr.InvalidOptions, "Time-series 'bucketRoundingSeconds' must be equal to 'bucketMaxSpanSeconds'")
		}
		o.roundingGiven = true
		return nil
	}
	o.Granularity = "seconds"
	o.MaxSpan, o.Rounding = spanOf(o.Granularity), roundingOf(o.Granularity)
	return nil
}

// Append appends the options as listCollections shows them, under key.
func (o *Options) Append(b *bson.Builder, key string) {
	b.StartDocument(key)
	b.AppendString("timeField", o.TimeField)
	if o.MetaField != "" {
		b.AppendString("metaField", o.MetaField)
	}
	if o.Granularity != "" {
		b.AppendString("granularity", o.Granularity)
	}
	if o.roundingGiven {
		b.AppendInt32("bucketRoundingSeconds", int32(o.Rounding))
	}
	b.AppendInt32("bucketMaxSpanSeconds", int32(o.MaxSpan))
	b.End()
}

// Doc is the options as a document ({timeField, metaField, ...}).
func (o *Options) Doc() bson.Doc {
	var b bson.Builder
	o.Append(&b, "t")
	v, _ := b.Finish().Lookup("t")
	return v.Document()
}

// Equal reports whether o and p bucket alike (mongod's optionsAreEqual).
func (o *Options) Equal(p *Options) bool {
	return o.TimeField == p.TimeField && o.MetaField == p.MetaField && o.Granularity == p.Granularity &&
		o.MaxSpan == p.MaxSpan && o.Rounding == p.Rounding
}

// FromCollection reads the options stored with a buckets collection
// (its catalog options); nil when they hold none.
func FromCollection(options bson.Doc) *Options {
	if len(options) == 0 {
		return nil
	}
	v, ok := options.Lookup("timeseries")
	if !ok || v.Type != bson.TypeDocument {
		return nil
	}
	o := &Options{}
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		switch e.Key {
		case "timeField":
			o.TimeField = e.Value.StringValue()
		case "metaField":
			o.MetaField = e.Value.StringValue()
		case "granularity":
			o.Granularity = e.Value.StringValue()
		case "bucketMaxSpanSeconds":
			o.MaxSpan, _ = e.Value.AsInt64()
		case "bucketRoundingSeconds":
			o.Rounding, _ = e.Value.AsInt64()
			o.roundingGiven = true
		}
	}
	if o.Granularity != "" && !o.roundingGiven {
		o.Rounding = roundingOf(o.Granularity)
	}
	if o.MaxSpan == 0 {
		o.MaxSpan = spanOf(o.Granularity)
	}
	if o.Rounding == 0 {
		o.Rounding = o.MaxSpan
	}
	return o
}

// ViewPipeline is the view's pipeline (an array document), mongod's
// generateViewPipeline.
func (o *Options) ViewPipeline() bson.Doc {
	var b bson.Builder
	b.StartDocument("0")
	b.StartDocument(UnpackStage)
	b.AppendString("timeField", o.TimeField)
	if o.MetaField != "" {
		b.AppendString("metaField", o.MetaField)
	}
	b.AppendInt32("bucketMaxSpanSeconds", int32(o.MaxSpan))
	b.End()
	b.End()
	return b.Finish()
}

// UnpackStage is the name of the stage that unpacks buckets.
const UnpackStage = "$_internalUnpackBucket"

// CollMod applies collMod's timeseries option to o, with mongod's
// checks (granularity only coarser: seconds → minutes → hours; bucket
// spans only larger). changed is false when nothing changes.
func (o *Options) CollMod(v bson.Value) (next *Options, changed bool, err error) {
	if v.Type != bson.TypeDocument {
		return nil, false, badType("collMod.timeseries", v.Type, "object")
	}
	var gran string
	var span, rounding int64
	hasSpan, hasRounding := false, false
	it := v.Document().Iter()
	for it.Next() {
		e := it.Element()
		field := "collMod.timeseries." + e.Key
		switch e.Key {
		case "granularity":
			if e.Value.Type != bson.TypeString {
				return nil, false, badType(field, e.Value.Type, "string")
			}
			switch g := e.Value.StringValue(); g {
			case "seconds", "minutes", "hours":
				gran = g
			default:
				return nil, false, mongoerr.New(mongoerr.BadValue, "Enumeration value '%s' for field '%s' is not a valid value.", g, field)
			}
		case "bucketMaxSpanSeconds":
			if span, err = seconds(field, e.Value); err != nil {
				return nil, false, err
			}
			hasSpan = true
		case "bucketRoundingSeconds":
			if rounding, err = seconds(field, e.Value); err != nil {
				return nil, false, err
			}
			hasRounding = true
		default:
			return nil, false, mongoerr.New(mongoerr.IDLUnknownField, "BSON field '%s' is an unknown field.", field)
		}
	}
	if gran == "" && !hasSpan && !hasRounding {
		return o, false, nil
	}
	n := *o
	if gran != "" {
		if hasSpan && span != spanOf(gran) {
			return nil, false, mongoerr.New(mongoerr.InvalidOptions, "Timeseries 'bucketMaxSpanSeconds' is not configurable to a value other than the default for the provided granularity")
		}
		if hasRounding {
			return nil, false, mongoerr.New(mongoerr.InvalidOptions, "Timeseries 'bucketRoundingSeconds' is not configurable alongside the granularity parameter")
		}
		if o.Granularity != "" {
			if o.Granularity == gran {
				return o, false, nil
			}
			if o.Granularity == "hours" || (o.Granularity == "minutes" && gran != "hours") {
				return nil, false, mongoerr.New(mongoerr.InvalidOptions, "Invalid transition for timeseries.granularity. Can only transition from 'seconds' to 'minutes' or 'minutes' to 'hours'.")
			}
		}
		n.Granularity, n.MaxSpan, n.Rounding, n.roundingGiven = gran, spanOf(gran), roundingOf(gran), false
	} else {
		if !hasSpan || !hasRounding {
			return nil, false, mongoerr.New(mongoerr.InvalidOptions, "Timeseries 'bucketMaxSpanSeconds' and 'bucketRoundingSeconds' need to be set alongside each other")
		}
		if span != rounding {
			return nil, false, mongoerr.New(mongoerr.InvalidOptions, "Timeseries 'bucketRoundingSeconds' needs to be equal to 'bucketMaxSpanSeconds'")
		}
		n.Granularity, n.MaxSpan, n.Rounding, n.roundingGiven = "", span, rounding, true
	}
	if n.MaxSpan == o.MaxSpan && n.Rounding == o.Rounding {
		return o, false, nil
	}
	if o.MaxSpan > n.MaxSpan {
		return nil, false, mongoerr.New(mongoerr.InvalidOptions, "Timeseries 'bucketMaxSpanSeconds' needs to be equal or greater to transition")
	}
	if o.Rounding > n.Rounding {
		return nil, false, mongoerr.New(mongoerr.InvalidOptions, "Timeseries 'bucketRoundingSeconds' needs to be equal or greater to transition")
	}
	return &n, true, nil
}

// Validator is the buckets collection's validator, mongod's $jsonSchema
// of a bucket (control.version 1 or 2, control.min/max with the time as a
// date, data an object).
func (o *Options) Validator() bson.Doc {
	var b bson.Builder
	startObject(&b, "$jsonSchema", "_id", "control", "data")
	b.StartDocument("properties")
	typed(&b, "_id", "objectId")
	startObject(&b, "control", "version", "min", "max")
	b.StartDocument("properties")
	typed(&b, "version", "number")
	for _, k := range []string{"min", "max"} {
		startObject(&b, k, o.TimeField)
		b.StartDocument("properties")
		typed(&b, o.TimeField, "date")
		b.End()
		b.End()
	}
	typed(&b, "closed", "bool")
	b.StartDocument("count")
	b.AppendString("bsonType", "number")
	b.AppendInt32("minimum", 1)
	b.End()
	b.End()
	b.AppendBool("additionalProperties", false)
	b.End()
	startObject(&b, "data")
	b.End()
	b.StartDocument("meta")
	b.End()
	b.End()
	b.AppendBool("additionalProperties", false)
	b.End()
	return b.Finish()
}

// startObject opens the schema of an object under key: {bsonType:
// "object", required: [required...]} (no required array when none), left
// open for its properties.
func startObject(b *bson.Builder, key string, required ...string) {
	b.StartDocument(key)
	b.AppendString("bsonType", "object")
	if len(required) == 0 {
		return
	}
	b.StartArray("required")
	for i, r := range required {
		b.AppendString(bson.Index(i), r)
	}
	b.End()
}

// typed appends the schema {bsonType: t} under key.
func typed(b *bson.Builder, key, t string) {
	b.StartDocument(key)
	b.AppendString("bsonType", t)
	b.End()
}
