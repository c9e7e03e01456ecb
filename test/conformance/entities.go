package conformance

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// entityMap holds one test's entities. Names are unique across kinds.
type entityMap struct {
	server   serverInfo
	names    map[string]string // name -> kind
	clients  map[string]*clientEntity
	dbs      map[string]*mongo.Database
	colls    map[string]*mongo.Collection
	sessions map[string]*sessionEntity
	cursors  map[string]*mongo.Cursor
	streams  map[string]*mongo.ChangeStream
	buckets  map[string]*mongo.GridFSBucket
	values   map[string]bson.RawValue

	failPoints []failPointRef // to turn off when the test ends

	internal *mongo.Client // the runner's own client (assertions)
	baseURI  string        // the server's URI, for clients created by operations
	notes    *[]string     // the test's notes
}

type failPointRef struct {
	client *clientEntity
	name   string
}

func newEntityMap() *entityMap {
	return &entityMap{
		names:    map[string]string{},
		clients:  map[string]*clientEntity{},
		dbs:      map[string]*mongo.Database{},
		colls:    map[string]*mongo.Collection{},
		sessions: map[string]*sessionEntity{},
		cursors:  map[string]*mongo.Cursor{},
		streams:  map[string]*mongo.ChangeStream{},
		buckets:  map[string]*mongo.GridFSBucket{},
		values:   map[string]bson.RawValue{},
	}
}

func (em *entityMap) add(name, kind string) error {
	if name == "" {
		return fmt.Errorf("%s entity without an id", kind)
	}
	if k, ok := em.names[name]; ok {
		return fmt.Errorf("entity %q already exists (a %s)", name, k)
	}
	em.names[name] = kind
	return nil
}

func (em *entityMap) kind(name string) string { return em.names[name] }

func (em *entityMap) client(name string) (*clientEntity, error) {
	if c, ok := em.clients[name]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("no client entity %q", name)
}

func (em *entityMap) database(name string) (*mongo.Database, error) {
	if d, ok := em.dbs[name]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("no database entity %q", name)
}

func (em *entityMap) collection(name string) (*mongo.Collection, error) {
	if c, ok := em.colls[name]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("no collection entity %q", name)
}

func (em *entityMap) session(name string) (*sessionEntity, error) {
	if s, ok := em.sessions[name]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("no session entity %q", name)
}

func (em *entityMap) bsonEntity(name string) (bson.RawValue, error) {
	if v, ok := em.values[name]; ok {
		return v, nil
	}
	return missing, fmt.Errorf("no BSON entity %q", name)
}

func (em *entityMap) sessionLsid(name string) (bson.Raw, error) {
	s, err := em.session(name)
	if err != nil {
		return nil, err
	}
	return s.lsid, nil
}

// close turns off fail points and releases every entity: cursors, sessions,
// then clients.
func (em *entityMap) close(ctx context.Context) {
	for _, fp := range em.failPoints {
		off := bson.D{{Key: "configureFailPoint", Value: fp.name}, {Key: "mode", Value: "off"}}
		_ = fp.client.client.Database("admin").RunCommand(ctx, off).Err()
	}
	for _, c := range em.cursors {
		_ = c.Close(ctx)
	}
	for _, cs := range em.streams {
		_ = cs.Close(ctx)
	}
	for _, s := range em.sessions {
		s.end(ctx)
	}
	for _, c := range em.clients {
		c.stopRecording()
		_ = c.client.Disconnect(ctx)
	}
}

// createEntity builds one createEntities element.
func (em *entityMap) createEntity(ctx context.Context, baseURI string, spec bson.Raw) error {
	elems, err := spec.Elements()
	if err != nil || len(elems) != 1 {
		return fmt.Errorf("entity must have exactly one key: %s", spec)
	}
	kind := elems[0].Key()
	body, ok := elems[0].Value().DocumentOK()
	if !ok {
		return fmt.Errorf("entity %s is not a document", kind)
	}
	a := newArgs(body)
	id := a.str("id")
	switch kind {
	case "client":
		c, err := newClientEntity(ctx, baseURI, id, a)
		if err != nil {
			return err
		}
		if err := em.add(id, kind); err != nil {
			_ = c.client.Disconnect(ctx)
			return err
		}
		em.clients[id] = c
		return nil
	case "database":
		c, err := em.client(a.str("client"))
		if err != nil {
			return err
		}
		opts := options.Database()
		if o, ok := a.doc("databaseOptions"); ok {
			rc, wc, rp, err := commonOptions(o)
			if err != nil {
				return err
			}
			opts.SetReadConcern(rc).SetWriteConcern(wc).SetReadPreference(rp)
		}
		name := a.str("databaseName")
		if err := a.done(); err != nil {
			return err
		}
		if err := em.add(id, kind); err != nil {
			return err
		}
		em.dbs[id] = c.client.Database(name, opts)
		return nil
	case "collection":
		db, err := em.database(a.str("database"))
		if err != nil {
			return err
		}
		opts := options.Collection()
		if o, ok := a.doc("collectionOptions"); ok {
			rc, wc, rp, err := commonOptions(o)
			if err != nil {
				return err
			}
			opts.SetReadConcern(rc).SetWriteConcern(wc).SetReadPreference(rp)
		}
		name := a.str("collectionName")
		if err := a.done(); err != nil {
			return err
		}
		if err := em.add(id, kind); err != nil {
			return err
		}
		em.colls[id] = db.Collection(name, opts)
		return nil
	case "session":
		return em.createSession(ctx, id, a)
	case "bucket":
		return em.createBucket(id, a)
	}
	return skipf("entity type %s", kind)
}

// commonOptions reads collectionOrDatabaseOptions. Nil results leave the
// inherited setting in place.
func commonOptions(o bson.Raw) (*readconcern.ReadConcern, *writeconcern.WriteConcern, *readpref.ReadPref, error) {
	a := newArgs(o)
	var rc *readconcern.ReadConcern
	var wc *writeconcern.WriteConcern
	var rp *readpref.ReadPref
	if d, ok := a.doc("readConcern"); ok {
		rc = &readconcern.ReadConcern{Level: newArgs(d).str("level")}
	}
	if d, ok := a.doc("writeConcern"); ok {
		var err error
		if wc, err = parseWriteConcern(d); err != nil {
			return nil, nil, nil, err
		}
	}
	if d, ok := a.doc("readPreference"); ok {
		var err error
		if rp, err = parseReadPref(d); err != nil {
			return nil, nil, nil, err
		}
	}
	if a.has("timeoutMS") {
		return nil, nil, nil, skipf("timeoutMS (client-side operation timeout) option")
	}
	if err := a.done(); err != nil {
		return nil, nil, nil, skipf("collection/database option: %v", err)
	}
	return rc, wc, rp, nil
}

func parseWriteConcern(d bson.Raw) (*writeconcern.WriteConcern, error) {
	a := newArgs(d)
	wc := &writeconcern.WriteConcern{}
	if a.has("w") {
		w := a.raw("w")
		if s, ok := w.StringValueOK(); ok {
			wc.W = s
		} else {
			wc.W = int(w.AsInt64())
		}
	}
	if a.has("journal") {
		j := a.bool("journal")
		wc.Journal = &j
	}
	a.raw("wtimeoutMS") // replication timeout: irrelevant on a standalone
	if err := a.done(); err != nil {
		return nil, skipf("write concern: %v", err)
	}
	return wc, nil
}

func parseReadPref(d bson.Raw) (*readpref.ReadPref, error) {
	a := newArgs(d)
	mode, err := readpref.ModeFromString(a.str("mode"))
	if err != nil {
		return nil, err
	}
	var opts []readpref.Option
	if a.has("maxStalenessSeconds") {
		opts = append(opts, readpref.WithMaxStaleness(time.Duration(a.int("maxStalenessSeconds"))*time.Second))
	}
	if err := a.done(); err != nil {
		return nil, skipf("read preference: %v", err)
	}
	return readpref.New(mode, opts...)
}

// clientURI applies a client entity's uriOptions to the server's URI.
func clientURI(base string, uriOpts bson.Raw) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	q := u.Query()
	elems, err := uriOpts.Elements()
	if err != nil {
		return "", err
	}
	for _, e := range elems {
		v := e.Value()
		var s string
		switch v.Type {
		case bson.TypeString:
			s = v.StringValue()
		case bson.TypeBoolean:
			s = strconv.FormatBool(v.Boolean())
		case bson.TypeInt32, bson.TypeInt64, bson.TypeDouble:
			s = strconv.FormatInt(v.AsInt64(), 10)
		default:
			return "", skipf("uriOption %s of type %s", e.Key(), v.Type)
		}
		q.Set(e.Key(), s)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// monitoringMode is "poll" because with the streaming protocol the Go driver
// v2 sometimes waits a whole heartbeat interval (10 s) in Disconnect when the
// client is closed a few milliseconds after it connected, as clients of tests
// that fail client-side are.
const monitoringMode = options.ServerMonitoringModePoll

func newClientEntity(ctx context.Context, baseURI, id string, a *args) (*clientEntity, error) {
	c := &clientEntity{id: id, observe: map[string]bool{}, ignore: map[string]bool{}}
	for _, v := range a.strings("observeEvents") {
		switch v {
		case "commandStartedEvent", "commandSucceededEvent", "commandFailedEvent":
			c.observe[v] = true
		default:
			if !isCMAPKind(v) {
				return nil, skipf("observing %s (only command monitoring and CMAP events are supported)", v)
			}
			c.observe[v] = true
		}
	}
	for _, v := range a.strings("ignoreCommandMonitoringEvents") {
		c.ignore[v] = true
	}
	if a.has("observeSensitiveCommands") {
		c.sensitive = a.bool("observeSensitiveCommands")
	}
	uri := baseURI
	if o, ok := a.doc("uriOptions"); ok {
		var err error
		if uri, err = clientURI(baseURI, o); err != nil {
			return nil, err
		}
	}
	// One server: a client with several mongoses is the same as one with a
	// single mongos.
	a.raw("useMultipleMongoses")
	for _, k := range []string{"storeEventsAsEntities", "observeLogMessages", "autoEncryptOpts"} {
		if a.has(k) {
			return nil, skipf("client option %s", k)
		}
	}
	var api *options.ServerAPIOptions
	if d, ok := a.doc("serverApi"); ok {
		sa := newArgs(d)
		api = options.ServerAPI(options.ServerAPIVersion(sa.str("version")))
		if sa.has("strict") {
			api.SetStrict(sa.bool("strict"))
		}
		if sa.has("deprecationErrors") {
			api.SetDeprecationErrors(sa.bool("deprecationErrors"))
		}
		if err := sa.done(); err != nil {
			return nil, skipf("serverApi: %v", err)
		}
	}
	if err := a.done(); err != nil {
		return nil, skipf("client option: %v", err)
	}
	opts := options.Client().ApplyURI(uri).
		SetMonitor(c.monitor()).
		SetPoolMonitor(c.poolMonitor()).
		SetServerSelectionTimeout(10 * time.Second).
		SetServerMonitoringMode(monitoringMode)
	if api != nil {
		opts.SetServerAPIOptions(api)
	}
	client, err := mongo.Connect(opts)
	if err != nil {
		return nil, err
	}
	c.client = client
	return c, nil
}
