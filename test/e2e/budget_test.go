package e2e

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
	"github.com/cairndb/cairn/internal/wire"
)

func serverAddr(srv *cairndtest.Server) string {
	return srv.URI[len("mongodb://"):strings.Index(srv.URI, "/?")]
}

// openSilent opens n raw connections that each send a header announcing
// a 47,000,000-byte OP_MSG (every other one followed by 100 bytes of its
// body) and then nothing more.
func openSilent(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	var hdr [16 + 100]byte
	binary.LittleEndian.PutUint32(hdr[:], 47000000)
	binary.LittleEndian.PutUint32(hdr[12:], uint32(wire.OpMsg))
	conns := make([]net.Conn, 0, n)
	for i := 0; i < n; i++ {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, nc)
		b := hdr[:16]
		if i%2 == 1 {
			b = hdr[:]
		}
		if _, err := nc.Write(b); err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	return conns
}

func connsCurrent(t *testing.T, c *mongo.Client) int64 {
	t.Helper()
	var st struct {
		Connections struct {
			Current int64 `bson:"current"`
		} `bson:"connections"`
	}
	if err := c.Database("admin").RunCommand(ctx(t), bson.D{{Key: "serverStatus", Value: 1}}).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st.Connections.Current
}

// TestSilentConnectionsDoNotStallClients: 1,000 connections that announce
// 47 MB messages and stay silent (issue 19: 23 of them made every client
// wait ~59 s for the in-flight request budget) delay neither a ping nor a
// 4 MB insert of a well-behaved client.
func TestSilentConnectionsDoNotStallClients(t *testing.T) {
	srv := cairndtest.Start(t)
	client := dial(t, srv.URI)
	openSilent(t, serverAddr(srv), 1000)
	for deadline := time.Now().Add(30 * time.Second); connsCurrent(t, client) < 1000; {
		if time.Now().After(deadline) {
			t.Fatalf("the server has %d connections, want the 1,000 silent ones too", connsCurrent(t, client))
		}
		time.Sleep(50 * time.Millisecond)
	}
	coll := client.Database("app").Collection("big")
	pad := strings.Repeat("x", 4<<20)
	for i := 0; i < 5; i++ {
		c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := client.Ping(c, nil)
		cancel()
		if err != nil {
			t.Fatalf("ping %d with 1,000 silent connections open: %v", i, err)
		}
		c, cancel = context.WithTimeout(context.Background(), 20*time.Second)
		_, err = coll.InsertOne(c, bson.D{{Key: "_id", Value: i}, {Key: "pad", Value: pad}})
		cancel()
		if err != nil {
			t.Fatalf("4 MB insert %d with 1,000 silent connections open: %v", i, err)
		}
	}
}

// rawHello sends a hello padded to about pad bytes on a new connection and
// returns the reply, or the error (io.EOF: the server closed it).
func rawHello(addr string, pad int) (bson.Raw, error) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	c := &loadConn{nc: nc, r: wire.NewReader(nc, 0)}
	return c.run(bson.D{{Key: "hello", Value: 1}, {Key: "bigField", Value: strings.Repeat("x", pad)}, {Key: "$db", Value: "admin"}})
}

// TestPreAuthMessageSizeLimit: with --auth, a connection that has not
// authenticated may send messages of at most
// preAuthMaximumMessageSizeBytes (16 KiB, as mongod 8.0); a larger one,
// or a header announcing one, closes the connection and is counted;
// authenticated connections are not limited; the parameter can be
// raised at run time.
func TestPreAuthMessageSizeLimit(t *testing.T) {
	srv := cairndtest.Start(t, "--auth")
	addr := serverAddr(srv)
	anon := dial(t, srv.URI)
	createUser(t, anon.Database("admin"), "root", "rootpw", bson.A{"root"})
	root := authClient(t, srv.URI, "root", "rootpw", "")

	if _, err := rawHello(addr, 1000); err != nil {
		t.Fatalf("small hello before authenticating: %v", err)
	}
	if _, err := rawHello(addr, 20<<10); !errors.Is(err, io.EOF) && !isConnReset(err) {
		t.Fatalf("20 KiB hello before authenticating: %v, want the connection closed", err)
	}
	silent := openSilent(t, addr, 50)
	for i, c := range silent {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil || isTimeout(err) {
			t.Fatalf("silent connection %d announcing 47 MB: %v, want it closed", i, err)
		}
	}
	var st struct {
		Metrics struct {
			Network struct {
				PreAuth int64 `bson:"totalMessageSizeErrorPreAuth"`
			} `bson:"network"`
		} `bson:"metrics"`
	}
	if err := root.Database("admin").RunCommand(ctx(t), bson.D{{Key: "serverStatus", Value: 1}}).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.Metrics.Network.PreAuth != 51 {
		t.Errorf("totalMessageSizeErrorPreAuth = %d, want 51", st.Metrics.Network.PreAuth)
	}
	if err := root.Database("admin").RunCommand(ctx(t), bson.D{{Key: "hello", Value: 1}, {Key: "bigField", Value: strings.Repeat("x", 20<<10)}}).Err(); err != nil {
		t.Fatalf("20 KiB hello after authenticating: %v", err)
	}

	var was struct {
		Was int64 `bson:"was"`
	}
	if err := root.Database("admin").RunCommand(ctx(t), bson.D{{Key: "setParameter", Value: 1}, {Key: "preAuthMaximumMessageSizeBytes", Value: 1 << 20}}).Decode(&was); err != nil || was.Was != 16<<10 {
		t.Fatalf("setParameter: was %d, %v", was.Was, err)
	}
	if _, err := rawHello(addr, 20<<10); err != nil {
		t.Fatalf("20 KiB hello before authenticating with a 1 MiB limit: %v", err)
	}
	err := root.Database("admin").RunCommand(ctx(t), bson.D{{Key: "setParameter", Value: 1}, {Key: "preAuthMaximumMessageSizeBytes", Value: 10}}).Err()
	cmdErr(t, err, 2)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func isConnReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe"))
}

// TestAuthFailureRateLimit: many parallel failed authentications from one
// address (127.0.0.2) test at most authFailureBurst passwords plus
// authFailuresPerMinute a minute (and those in flight at once); the
// address is refused, its correct password too, and the refusal logged;
// another address (127.0.0.1) authenticates throughout; after the window
// the correct password works from 127.0.0.2 again.
func TestAuthFailureRateLimit(t *testing.T) {
	srv := cairndtest.Start(t, "--auth", "--setParameter", "authFailuresPerMinute=60", "--setParameter", "authFailureBurst=5")
	anon := dial(t, srv.URI)
	createUser(t, anon.Database("admin"), "root", "rootpw", bson.A{"root"})
	from := func(ip string) *options.ClientOptions {
		return options.Client().SetDialer(&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).SetMaxPoolSize(1)
	}
	attempt := func(ip, pwd string) error {
		cred := options.Credential{Username: "root", Password: pwd, AuthSource: "admin"}
		c, err := mongo.Connect(options.MergeClientOptions(options.Client().ApplyURI(srv.URI).SetAuth(cred).SetTimeout(10*time.Second), from(ip)))
		if err != nil {
			return err
		}
		defer c.Disconnect(context.Background())
		cx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return c.Ping(cx, nil)
	}
	const workers = 16
	const attackFor = 3 * time.Second
	var wg sync.WaitGroup
	var attempts, accepted atomic.Int64
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(start) < attackFor {
				err := attempt("127.0.0.2", "guess")
				attempts.Add(1)
				if err == nil {
					accepted.Add(1)
				} else if !strings.Contains(err.Error(), "AuthenticationFailed") {
					t.Errorf("guess: %v, want AuthenticationFailed", err)
					return
				}
			}
		}()
	}
	// Meanwhile another address authenticates, and 127.0.0.2 cannot, even
	// with the right password.
	time.Sleep(attackFor / 2)
	if err := attempt("127.0.0.1", "rootpw"); err != nil {
		t.Errorf("another address during the attack: %v", err)
	}
	if err := attempt("127.0.0.2", "rootpw"); err == nil || !strings.Contains(err.Error(), "AuthenticationFailed") {
		t.Errorf("the limited address with the right password: %v, want AuthenticationFailed", err)
	}
	wg.Wait()
	elapsed := time.Since(start)
	if accepted.Load() != 0 {
		t.Fatalf("%d wrong passwords accepted", accepted.Load())
	}
	logs := srv.Logs()
	tested := int64(strings.Count(logs, `"id":5286307`))
	limit := 5 + int64(elapsed.Seconds()) + 1 + workers
	t.Logf("%d guesses from 16 connections in %v: %d tested a password (limit %d)", attempts.Load(), elapsed.Round(time.Millisecond), tested, limit)
	if tested > limit {
		t.Errorf("%d passwords tested, want at most %d (burst 5, 60 a minute, %d in flight)", tested, limit, workers)
	}
	if attempts.Load() <= limit {
		t.Fatalf("only %d guesses: the test did not push past the limit", attempts.Load())
	}
	if !strings.Contains(logs, "too many failed authentications from this address") {
		t.Errorf("no log line for the refusals")
	}
	// The window: at most (burst+1)/rate = 6 s after the last failure.
	deadline := time.Now().Add(15 * time.Second)
	for attempt("127.0.0.2", "rootpw") != nil {
		if time.Now().After(deadline) {
			t.Fatal("127.0.0.2 still refused 15 s after its guessing stopped")
		}
		time.Sleep(500 * time.Millisecond)
	}

	// The parameters, read and changed at run time.
	root := authClient(t, srv.URI, "root", "rootpw", "")
	var params struct {
		PerMinute int64 `bson:"authFailuresPerMinute"`
		Burst     int64 `bson:"authFailureBurst"`
		PreAuth   int64 `bson:"preAuthMaximumMessageSizeBytes"`
	}
	if err := root.Database("admin").RunCommand(ctx(t), bson.D{{Key: "getParameter", Value: 1}, {Key: "authFailuresPerMinute", Value: 1},
		{Key: "authFailureBurst", Value: 1}, {Key: "preAuthMaximumMessageSizeBytes", Value: 1}}).Decode(&params); err != nil {
		t.Fatal(err)
	}
	if params.PerMinute != 60 || params.Burst != 5 || params.PreAuth != 16384 {
		t.Errorf("getParameter: %+v", params)
	}
	var was struct {
		Was int64 `bson:"was"`
	}
	if err := root.Database("admin").RunCommand(ctx(t), bson.D{{Key: "setParameter", Value: 1}, {Key: "authFailureBurst", Value: 20}}).Decode(&was); err != nil || was.Was != 5 {
		t.Errorf("setParameter authFailureBurst: was %d, %v", was.Was, err)
	}
	err := root.Database("admin").RunCommand(ctx(t), bson.D{{Key: "setParameter", Value: 1}, {Key: "authFailuresPerMinute", Value: -1}}).Err()
	cmdErr(t, err, 2)
}
