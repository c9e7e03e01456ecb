package session

import (
	"context"
	"fmt"
	"time"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/catalog"
	"github.com/cairndb/cairn/internal/exec"
	"github.com/cairndb/cairn/kv"
)

// recordDoc is a session's document in config.system.sessions and in
// $listLocalSessions' answer: {_id: {id, uid}, lastUse[, user: {name}]}.
func recordDoc(rec *Record) bson.Doc {
	var b bson.Builder
	rec.Key.AppendDoc(&b, "_id")
	b.AppendDateTime("lastUse", rec.LastUse.UnixMilli())
	if rec.User != "" {
		b.StartDocument("user")
		b.AppendString("name", rec.User)
		b.End()
	}
	return b.Finish()
}

// Doc is the record's document.
func (rec *Record) Doc() bson.Doc { return recordDoc(rec) }

// FlushResult says what a flush did.
type FlushResult struct {
	// Written is the number of session records written, Removed those
	// removed (ended or expired).
	Written, Removed int
	// Expired are the sessions that expired: their cursors are to be
	// killed.
	Expired []Key
}

// Flush is the periodic refresh of mongod's logical session cache: it
// expires idle sessions, writes the records touched since the last flush
// to config.system.sessions, removes those of ended and expired sessions
// (and, for the expired, and for records an earlier run left that have
// expired since, their retryable-write state) in one write transaction.
func (r *Registry) Flush(ctx context.Context, db *kv.DB) (FlushResult, error) {
	now := r.now()
	var res FlushResult
	res.Expired = r.expire(now)
	touched, ended := r.pending()
	err := db.Update(ctx, func(tx *kv.Tx) error {
		coll, err := catalog.Get(tx, ConfigDB, SessionsColl)
		if err != nil {
			return err
		}
		if coll == nil {
			if len(touched) == 0 {
				return r.reapTransactions(tx, now, nil)
			}
			if coll, err = catalog.Create(tx, ConfigDB, SessionsColl, nil); err != nil {
				return err
			}
		}
		w, err := exec.OpenWriter(tx, coll)
		if err != nil {
			return err
		}
		for i := range touched {
			d := recordDoc(&touched[i])
			key := idKey(touched[i].Key)
			old, err := w.Data.Get(key)
			if err != nil {
				return fmt.Errorf("reading config.system.sessions: %w", err)
			}
			if old != nil {
				err = w.Replace(key, bson.Doc(append([]byte(nil), old...)), d)
			} else {
				_, _, err = w.Insert(d)
			}
			if err != nil {
				return err
			}
			res.Written++
		}
		gone := func(k Key) error {
			key := idKey(k)
			old, err := w.Data.Get(key)
			if err != nil {
				return fmt.Errorf("reading config.system.sessions: %w", err)
			}
			if old == nil {
				return nil
			}
			res.Removed++
			return w.Remove(key, bson.Doc(append([]byte(nil), old...)))
		}
		for _, k := range ended {
			if err := gone(k); err != nil {
				return err
			}
		}
		for _, k := range res.Expired {
			if err := gone(k); err != nil {
				return err
			}
			if err := Remove(tx, k); err != nil {
				return err
			}
		}
		// Records left by an earlier run (the server restarted) expire
		// by their lastUse.
		stale, err := r.staleRecords(w.Data, now)
		if err != nil {
			return err
		}
		for _, s := range stale {
			res.Removed++
			if err := w.Remove(s.key, s.doc); err != nil {
				return err
			}
			if err := Remove(tx, s.k); err != nil {
				return err
			}
		}
		return r.reapTransactions(tx, now, w.Data)
	})
	if err != nil {
		r.redirty(touched, ended)
		return res, fmt.Errorf("refreshing config.system.sessions: %w", err)
	}
	return res, nil
}

type staleRecord struct {
	k   Key
	key []byte
	doc bson.Doc
}

// staleRecords lists the records of config.system.sessions whose session
// is not live and whose lastUse is older than the timeout.
func (r *Registry) staleRecords(data *kv.Tree, now time.Time) ([]staleRecord, error) {
	var out []staleRecord
	cur := data.Cursor()
	for key, v := cur.First(); key != nil; key, v = cur.Next() {
		d := bson.Doc(v)
		k, ok := keyOfDoc(d)
		if !ok || r.Has(k) {
			continue
		}
		lu, _ := d.Lookup("lastUse")
		if lu.Type == bson.TypeDateTime && now.Sub(time.UnixMilli(lu.DateTime())) <= r.timeout {
			continue
		}
		out = append(out, staleRecord{k: k, key: append([]byte(nil), key...), doc: bson.Doc(append([]byte(nil), v...))})
	}
	return out, cur.Err()
}

// reapTransactions removes the retryable-write state of sessions that are
// neither live nor recorded in config.system.sessions (sessions data,
// nil: none) once their last write is older than the timeout (mongod's
// transaction reaper).
func (r *Registry) reapTransactions(tx *kv.Tx, now time.Time, sessions *kv.Tree) error {
	t, err := dataTree(tx, TransactionsColl, false)
	if err != nil || t == nil {
		return err
	}
	var victims []Key
	cur := t.Cursor()
	for _, v := cur.First(); v != nil; _, v = cur.Next() {
		d := bson.Doc(v)
		k, ok := keyOfDoc(d)
		if !ok || r.Has(k) {
			continue
		}
		if lw, _ := d.Lookup("lastWriteDate"); lw.Type == bson.TypeDateTime && now.Sub(time.UnixMilli(lw.DateTime())) <= r.timeout {
			continue
		}
		if sessions != nil {
			if v, err := sessions.Get(idKey(k)); err != nil {
				return err
			} else if v != nil {
				continue
			}
		}
		victims = append(victims, k)
	}
	if err := cur.Err(); err != nil {
		return err
	}
	for _, k := range victims {
		if err := Remove(tx, k); err != nil {
			return err
		}
	}
	return nil
}

// keyOfDoc reads the session key of a {_id: {id, uid}, ...} document.
func keyOfDoc(d bson.Doc) (Key, bool) {
	var k Key
	idv, ok1 := d.LookupPath("_id", "id")
	uidv, ok2 := d.LookupPath("_id", "uid")
	if !ok1 || !ok2 || idv.Type != bson.TypeBinary || uidv.Type != bson.TypeBinary {
		return k, false
	}
	_, id := idv.Binary()
	_, uid := uidv.Binary()
	if len(id) != 16 || len(uid) != 32 {
		return k, false
	}
	copy(k.ID[:], id)
	copy(k.UID[:], uid)
	return k, true
}

// Run flushes every interval until ctx ends; expired receives the
// sessions that expired (to kill their cursors), onErr a failed flush.
func (r *Registry) Run(ctx context.Context, db *kv.DB, interval time.Duration, expired func([]Key), onErr func(error)) {
	if interval <= 0 {
		interval = DefaultRefreshInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			res, err := r.Flush(ctx, db)
			if err != nil && ctx.Err() == nil && onErr != nil {
				onErr(err)
			}
			if len(res.Expired) > 0 && expired != nil {
				expired(res.Expired)
			}
		}
	}
}
