// Package timeseries implements MongoDB's time-series collections as
// mongod 7.0 stores them.
//
// # Storage
//
// A time-series collection db.coll is two catalog entries, as in mongod:
//
//   - db.system.buckets.coll, an ordinary clustered collection (its data
//     tree is in _id order) holding one document per bucket, with the
//     collection's time-series options ({timeseries: {...}, clusteredIndex:
//     true, expireAfterSeconds, validator}) — the only place the options
//     are kept;
//   - db.coll, a view on the buckets collection whose pipeline is
//     [{$_internalUnpackBucket: {timeField, metaField, bucketMaxSpanSeconds}}]
//     (ViewPipeline): every read through the view (find, aggregate,
//     count, distinct) runs that stage, which turns each bucket back into
//     its measurements (Unpack).
//
// A bucket holds the measurements of one meta value (the metaField's
// value, compared as BSON) whose times lie in [start, start +
// bucketMaxSpanSeconds), where start is the first measurement's time
// rounded down to bucketRoundingSeconds. While it takes measurements it
// is uncompressed (control.version 1):
//
//	{_id: ObjectId(start seconds, ...),
//	 control: {version: 1, min: {...}, max: {...}},
//	 meta: <meta value>,              // absent without a metaField value
//	 data: {<field>: {"0": v0, "1": v1, ...}, ...}}
//
// data holds every measurement field (the metaField excepted) as a column
// keyed by the measurement's position in the bucket; a measurement without
// the field has no key at its position. control.min and control.max hold
// each field's smallest and largest value in BSON order, except that
// control.min.<timeField> is the bucket's rounded start, as in mongod.
//
// A bucket written full (Closed: MaxCount measurements, or no room for
// one more of their average size) is compressed as mongod 7.0 compresses
// the buckets it closes (compress.go): control.version 2 with
// control.count, the measurements sorted by time, and each data.<field> a
// BSONColumn binary (BinData subtype 7, internal/bsoncolumn) with a skip
// where a measurement lacks the field. Every read (Unpack, Decode,
// BucketCount) takes both versions.
//
// # Inserts
//
// Measurements go into buckets chosen by the bucket catalog (Catalog), as
// mongod's BucketCatalog: per collection and meta value it remembers the
// last few buckets written (their _id, start, count and size). A
// measurement joins a remembered bucket whose span holds its time and
// that has room (at most MaxCount measurements and MaxSize bytes, mongod's
// timeseriesBucketMaxCount and timeseriesBucketMaxSize); otherwise it
// opens a new bucket. So measurements may come in any order: one older
// than an open bucket goes to an earlier remembered bucket that holds its
// time (mongod 7.0's reopening of archived buckets) or to a new bucket.
// The catalog holds hints only: each is checked against the bucket read in
// the writing transaction (a bucket deleted, or grown by a transaction
// that committed meanwhile, is seen as it is), so an aborted transaction or
// a restart costs at most a bucket that is less full than it could be.
// A batch of measurements is grouped by bucket first, so that each bucket
// is read and written once per insert command.
//
// # Reads
//
// Rewrite, applied to every pipeline that unpacks buckets, moves the
// parts of a $match that follows $_internalUnpackBucket and that test the
// timeField or the metaField in front of it as predicates on the buckets
// (control.min/control.max of the time, the bucket's meta), so that only
// the buckets that may hold matching measurements are unpacked — and those
// predicates may use the buckets collection's indexes. The $match itself
// stays after the unpacking, so the answer is the same with or without the
// bucket predicate.
//
// # Indexes, updates and deletes
//
// Indexes created through the collection are built on the buckets
// collection with mongod's key translation (BucketIndexKey): the metaField
// (and its subfields) becomes meta, and the timeField becomes
// control.min.<time> and control.max.<time>. Updates and deletes follow
// MongoDB 7.0: their filters (and an update's modifications) may name only
// the metaField, and act on whole buckets.
package timeseries
