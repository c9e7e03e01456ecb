package conformance

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

var bucketOps = map[string]opFunc{
	"upload":         bucketUpload,
	"download":       bucketDownload,
	"downloadByName": bucketDownloadByName,
	"delete":         bucketDelete,
	"deleteByName":   bucketDeleteByName,
	"rename":         bucketRename,
	"renameByName":   bucketRenameByName,
	"drop":           bucketDrop,
	"find":           bucketFind,
}

func (em *entityMap) createBucket(id string, a *args) error {
	db, err := em.database(a.str("database"))
	if err != nil {
		return err
	}
	opts := options.GridFSBucket()
	if d, ok := a.doc("bucketOptions"); ok {
		bo := newArgs(d)
		if bo.has("bucketName") {
			opts.SetName(bo.str("bucketName"))
		}
		if bo.has("chunkSizeBytes") {
			opts.SetChunkSizeBytes(int32(bo.int("chunkSizeBytes")))
		}
		if w, ok := bo.doc("writeConcern"); ok {
			wc, err := parseWriteConcern(w)
			if err != nil {
				return err
			}
			opts.SetWriteConcern(wc)
		}
		if r, ok := bo.doc("readPreference"); ok {
			rp, err := parseReadPref(r)
			if err != nil {
				return err
			}
			opts.SetReadPreference(rp)
		}
		if err := bo.done(); err != nil {
			return skipf("bucket option: %v", err)
		}
	}
	if err := a.done(); err != nil {
		return err
	}
	if err := em.add(id, "bucket"); err != nil {
		return err
	}
	em.buckets[id] = db.GridFSBucket(opts)
	return nil
}

func (em *entityMap) bucket(name string) (*mongo.GridFSBucket, error) {
	if b, ok := em.buckets[name]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("no bucket entity %q", name)
}

// hexBytesArg reads a {$$hexBytes: "..."} argument.
func hexBytesArg(a *args, k string) ([]byte, error) {
	d, ok := a.doc(k)
	if !ok {
		return nil, fmt.Errorf("argument %s: want {$$hexBytes: ...}", k)
	}
	op, v, ok := specialOperator(d)
	s, isStr := v.StringValueOK()
	if !ok || op != "$$hexBytes" || !isStr {
		return nil, fmt.Errorf("argument %s: want {$$hexBytes: ...}, got %s", k, d)
	}
	return hex.DecodeString(s)
}

func bytesResult(b []byte) opResult {
	return opResult{value: mustValue(bson.Binary{Subtype: 0, Data: b})}
}

func bucketUpload(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	b, err := em.bucket(obj)
	if err != nil {
		return opResult{}, err
	}
	src, err := hexBytesArg(a, "source")
	if err != nil {
		return opResult{}, err
	}
	filename := a.str("filename")
	opts := options.GridFSUpload()
	if a.has("chunkSizeBytes") {
		opts.SetChunkSizeBytes(int32(a.int("chunkSizeBytes")))
	}
	if m, ok := a.doc("metadata"); ok {
		opts.SetMetadata(m)
	}
	// The Go driver never computes the deprecated md5 field, which is what
	// disableMD5 asks for.
	a.bool("disableMD5")
	for _, k := range []string{"contentType", "aliases"} {
		if a.has(k) {
			return opResult{}, skipf("GridFS upload option %s (deprecated; not in the Go driver v2)", k)
		}
	}
	id, err := b.UploadFromStream(ctx, filename, bytes.NewReader(src), opts)
	if err != nil {
		return opResult{err: err}, nil
	}
	return opResult{value: mustValue(id)}, nil
}

func bucketDownload(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	b, err := em.bucket(obj)
	if err != nil {
		return opResult{}, err
	}
	var buf bytes.Buffer
	if _, err := b.DownloadToStream(ctx, a.raw("id"), &buf); err != nil {
		return opResult{err: err}, nil
	}
	return bytesResult(buf.Bytes()), nil
}

func bucketDownloadByName(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	b, err := em.bucket(obj)
	if err != nil {
		return opResult{}, err
	}
	opts := options.GridFSName()
	if a.has("revision") {
		opts.SetRevision(int32(a.int("revision")))
	}
	var buf bytes.Buffer
	if _, err := b.DownloadToStreamByName(ctx, a.str("filename"), &buf, opts); err != nil {
		return opResult{err: err}, nil
	}
	return bytesResult(buf.Bytes()), nil
}

func bucketDelete(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	b, err := em.bucket(obj)
	if err != nil {
		return opResult{}, err
	}
	return opResult{err: b.Delete(ctx, a.raw("id"))}, nil
}

// fileIDs returns the ids of every revision of a file, or
// mongo.ErrFileNotFound; the Go driver v2 has no *ByName helpers for delete
// and rename, which the GridFS spec defines as acting on all revisions.
func fileIDs(ctx context.Context, b *mongo.GridFSBucket, filename string) ([]bson.RawValue, error) {
	cur, err := b.GetFilesCollection().Find(ctx, bson.D{{Key: "filename", Value: filename}})
	if err != nil {
		return nil, err
	}
	defer cur.Close(ctx)
	var ids []bson.RawValue
	for cur.Next(ctx) {
		ids = append(ids, cur.Current.Lookup("_id"))
	}
	if err := cur.Err(); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, mongo.ErrFileNotFound
	}
	return ids, nil
}

func bucketDeleteByName(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	b, err := em.bucket(obj)
	if err != nil {
		return opResult{}, err
	}
	ids, err := fileIDs(ctx, b, a.str("filename"))
	for _, id := range ids {
		if err = b.Delete(ctx, id); err != nil {
			break
		}
	}
	return opResult{err: err}, nil
}

func bucketRename(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	b, err := em.bucket(obj)
	if err != nil {
		return opResult{}, err
	}
	return opResult{err: b.Rename(ctx, a.raw("id"), a.str("newFilename"))}, nil
}

func bucketRenameByName(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	b, err := em.bucket(obj)
	if err != nil {
		return opResult{}, err
	}
	ids, err := fileIDs(ctx, b, a.str("filename"))
	newName := a.str("newFilename")
	for _, id := range ids {
		if err = b.Rename(ctx, id, newName); err != nil {
			break
		}
	}
	return opResult{err: err}, nil
}

func bucketDrop(ctx context.Context, em *entityMap, obj string, _ *args) (opResult, error) {
	b, err := em.bucket(obj)
	if err != nil {
		return opResult{}, err
	}
	return opResult{err: b.Drop(ctx)}, nil
}

func bucketFind(ctx context.Context, em *entityMap, obj string, a *args) (opResult, error) {
	b, err := em.bucket(obj)
	if err != nil {
		return opResult{}, err
	}
	opts := options.GridFSFind()
	if s, ok := a.doc("sort"); ok {
		opts.SetSort(s)
	}
	if a.has("limit") {
		opts.SetLimit(int32(a.int("limit")))
	}
	if a.has("skip") {
		opts.SetSkip(int32(a.int("skip")))
	}
	if a.has("batchSize") {
		opts.SetBatchSize(int32(a.int("batchSize")))
	}
	cur, err := b.Find(ctx, filterArg(a), opts)
	return iterate(ctx, cur, err), nil
}
