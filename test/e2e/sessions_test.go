package e2e

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// listSessions runs a $listLocalSessions or $listSessions pipeline and
// returns the session ids it lists.
func listSessions(t *testing.T, db *mongo.Database, stage bson.D) map[string]bool {
	t.Helper()
	var cmd bson.D
	if stage[0].Key == "$listSessions" {
		cmd = bson.D{{Key: "aggregate", Value: "system.sessions"}, {Key: "pipeline", Value: bson.A{stage}}, {Key: "cursor", Value: bson.D{}}}
	} else {
		cmd = bson.D{{Key: "aggregate", Value: 1}, {Key: "pipeline", Value: bson.A{stage}}, {Key: "cursor", Value: bson.D{}}}
	}
	var out struct {
		Cursor struct {
			FirstBatch []bson.Raw `bson:"firstBatch"`
		} `bson:"cursor"`
	}
	if err := db.RunCommand(ctx(t), cmd).Decode(&out); err != nil {
		t.Fatalf("%s: %v", stage[0].Key, err)
	}
	ids := map[string]bool{}
	for _, d := range out.Cursor.FirstBatch {
		_, data := d.Lookup("_id", "id").Binary()
		ids[string(data)] = true
	}
	return ids
}

// TestSessionCommands: startSession, refreshSessions, endSessions,
// killSessions (which kills the session's cursor), $listLocalSessions and
// $listSessions over the flushed config.system.sessions.
func TestSessionCommands(t *testing.T) {
	srv := cairndtest.Start(t, "--setParameter", "logicalSessionRefreshMillis=100", "--setParameter", "localLogicalSessionTimeoutMinutes=7")
	client := dial(t, srv.URI)
	admin := client.Database("admin")
	var started struct {
		ID struct {
			ID bson.Binary `bson:"id"`
		} `bson:"id"`
		TimeoutMinutes int32 `bson:"timeoutMinutes"`
	}
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "startSession", Value: 1}}).Decode(&started); err != nil {
		t.Fatal(err)
	}
	if started.TimeoutMinutes != 7 || started.ID.ID.Subtype != 4 || len(started.ID.ID.Data) != 16 {
		t.Fatalf("startSession: %+v", started)
	}
	var hello bson.M
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil || intOf(hello["logicalSessionTimeoutMinutes"]) != 7 {
		t.Fatalf("hello logicalSessionTimeoutMinutes: %v %v", hello["logicalSessionTimeoutMinutes"], err)
	}
	idBytes := started.ID.ID.Data
	lsid := bson.D{{Key: "id", Value: started.ID.ID}}
	if !listSessions(t, admin, bson.D{{Key: "$listLocalSessions", Value: bson.D{}}})[string(idBytes)] {
		t.Fatal("$listLocalSessions does not list the started session")
	}
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "refreshSessions", Value: bson.A{lsid}}}).Err(); err != nil {
		t.Fatal(err)
	}
	// The flush writes it to config.system.sessions.
	cfg := client.Database("config")
	deadline := time.Now().Add(10 * time.Second)
	for !listSessions(t, cfg, bson.D{{Key: "$listSessions", Value: bson.D{{Key: "allUsers", Value: true}}}})[string(idBytes)] {
		if time.Now().After(deadline) {
			t.Fatal("$listSessions never listed the session")
		}
		time.Sleep(50 * time.Millisecond)
	}
	err := admin.RunCommand(ctx(t), bson.D{{Key: "aggregate", Value: 1}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$listSessions", Value: bson.D{}}}}}, {Key: "cursor", Value: bson.D{}}}).Err()
	cmdErr(t, err, 73)

	// killSessions kills the session's open cursor.
	db := client.Database("s")
	docs := []any{bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "a", Value: 2}}, bson.D{{Key: "a", Value: 3}}}
	if _, err := db.Collection("c").InsertMany(ctx(t), docs); err != nil {
		t.Fatal(err)
	}
	var found struct {
		Cursor struct {
			ID int64 `bson:"id"`
		} `bson:"cursor"`
	}
	if err := db.RunCommand(ctx(t), bson.D{{Key: "find", Value: "c"}, {Key: "batchSize", Value: 1}, {Key: "lsid", Value: lsid}}).Decode(&found); err != nil || found.Cursor.ID == 0 {
		t.Fatalf("find: %v %v", found, err)
	}
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "killSessions", Value: bson.A{lsid}}}).Err(); err != nil {
		t.Fatal(err)
	}
	err = db.RunCommand(ctx(t), bson.D{{Key: "getMore", Value: found.Cursor.ID}, {Key: "collection", Value: "c"}, {Key: "lsid", Value: lsid}}).Err()
	cmdErr(t, err, 43)

	// endSessions forgets it, and the flush removes its record.
	if err := admin.RunCommand(ctx(t), bson.D{{Key: "endSessions", Value: bson.A{lsid}}}).Err(); err != nil {
		t.Fatal(err)
	}
	if listSessions(t, admin, bson.D{{Key: "$listLocalSessions", Value: bson.D{{Key: "allUsers", Value: true}}}})[string(idBytes)] {
		t.Fatal("$listLocalSessions lists the ended session")
	}
	deadline = time.Now().Add(10 * time.Second)
	for listSessions(t, cfg, bson.D{{Key: "$listSessions", Value: bson.D{{Key: "allUsers", Value: true}}}})[string(idBytes)] {
		if time.Now().After(deadline) {
			t.Fatal("the ended session's record stayed in config.system.sessions")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, cmd := range []bson.D{
		{{Key: "killAllSessions", Value: bson.A{}}},
		{{Key: "killAllSessionsByPattern", Value: bson.A{bson.D{{Key: "users", Value: bson.A{bson.D{{Key: "user", Value: "u"}, {Key: "db", Value: "admin"}}}}}}}},
	} {
		if err := admin.RunCommand(ctx(t), cmd).Err(); err != nil {
			t.Errorf("%s: %v", cmd[0].Key, err)
		}
	}
}
