package auth

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/internal/mongoerr"
)

// fakeClock is a settable clock for the limiter.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestFailureLimiter(t *testing.T) {
	type step struct {
		advance time.Duration
		fail    string // record a failure for this address
		allow   string // check this address
		limited bool   // what allow must answer
	}
	cases := []struct {
		name             string
		perMinute, burst int64
		steps            []step
	}{
		{"a few typos are not limited", 60, 3, []step{
			{fail: "a"}, {fail: "a"}, {allow: "a"}, {fail: "a"}, {allow: "a", limited: true},
		}},
		{"refills at the rate", 60, 3, []step{
			{fail: "a"}, {fail: "a"}, {fail: "a"}, {allow: "a", limited: true},
			{advance: 500 * time.Millisecond, allow: "a", limited: true},
			{advance: 500 * time.Millisecond, allow: "a"},
			{fail: "a"}, {allow: "a", limited: true},
		}},
		{"other addresses are unaffected", 60, 2, []step{
			{fail: "a"}, {fail: "a"}, {allow: "a", limited: true}, {allow: "b"}, {fail: "b"}, {allow: "b"},
		}},
		{"overshoot is paid back, at most burst", 60, 2, []step{
			{fail: "a"}, {fail: "a"}, {fail: "a"}, {fail: "a"}, {fail: "a"}, {fail: "a"}, // tokens: -2 (floor)
			{advance: 2 * time.Second, allow: "a", limited: true}, // 0
			{advance: time.Second, allow: "a"},                    // 1
		}},
		{"refusals take nothing", 60, 1, []step{
			{fail: "a"}, {allow: "a", limited: true}, {allow: "a", limited: true}, {allow: "a", limited: true},
			{advance: time.Second, allow: "a"},
		}},
		{"off", 0, 1, []step{
			{fail: "a"}, {fail: "a"}, {allow: "a"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{t: time.Unix(1e9, 0)}
			l := newFailureLimiter(tc.perMinute, tc.burst)
			l.now = clk.now
			for i, st := range tc.steps {
				clk.advance(st.advance)
				if st.fail != "" {
					l.fail(st.fail)
				}
				if st.allow != "" {
					if got := l.allow(st.allow).limited; got != st.limited {
						t.Fatalf("step %d: %s limited = %v, want %v", i, st.allow, got, st.limited)
					}
				}
			}
		})
	}
}

func TestClientAddr(t *testing.T) {
	for _, tc := range []struct{ remote, want string }{
		{"127.0.0.2:5000", "127.0.0.2"},
		{"[::1]:5000", "::/64"},
		{"[2001:db8:1:2:3:4:5:6]:27017", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff::1]:1", "2001:db8:1:2::/64"},
		{"[::ffff:10.0.0.1]:1", "10.0.0.1"}, // one bucket with 10.0.0.1
		{"/tmp/mongodb-27017.sock", "/tmp/mongodb-27017.sock"},
	} {
		if got := clientAddr(tc.remote); got != tc.want {
			t.Errorf("clientAddr(%q) = %q, want %q", tc.remote, got, tc.want)
		}
	}
}

// TestFailureLimiterForgets: addresses whose buckets refilled are dropped.
func TestFailureLimiterForgets(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	l := newFailureLimiter(60, 1)
	l.now = clk.now
	for i := 0; i < sweepAt; i++ {
		l.fail(strings.Repeat("x", i%7) + string(rune('a'+i%26)) + time.Duration(i).String())
	}
	clk.advance(time.Minute)
	l.fail("new")
	if n := len(l.buckets); n != 1 {
		t.Fatalf("%d buckets after the sweep, want 1", n)
	}
}

// TestAuthRateLimit: after the burst of failures an address is refused
// without its password being looked at (the right one too), and logged;
// another address is not; after the window the right password works, and
// successes take nothing.
func TestAuthRateLimit(t *testing.T) {
	m := newManager(t)
	var logBuf syncBuffer
	m.opts.Logger = slog.New(slog.NewTextHandler(&logBuf, nil))
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	m.limiter.now = clk.now
	m.SetFailureLimit(60, 3)
	addUser(t, m, "admin", "alice", "s3cret")
	attacker, other := "10.0.0.1", "10.0.0.2"
	try := func(addr, pwd string) error {
		t.Helper()
		return converse(t, m, &Session{Remote: addr + ":5000"}, SCRAMSHA256, "alice", pwd, true)
	}
	authFailed := func(err error) bool {
		var me *mongoerr.Error
		return errors.As(err, &me) && me.Code == mongoerr.AuthenticationFailed && me.Message == "Authentication failed."
	}
	for i := 0; i < 10; i++ {
		if err := try(attacker, "s3cret"); err != nil {
			t.Fatalf("correct password %d: %v", i, err)
		}
	}
	// An unknown user, or a mechanism the user has no credentials for (a
	// driver negotiating meets it), tests no password: not counted.
	for i := 0; i < 20; i++ {
		if err := converse(t, m, &Session{Remote: attacker + ":5000"}, SCRAMSHA256, "nobody", "s3cret", true); !authFailed(err) {
			t.Fatalf("unknown user: %v", err)
		}
	}
	if failed, _ := m.FailureCounts(); failed != 0 {
		t.Fatalf("%d failures counted for an unknown user, want 0", failed)
	}
	for i := 0; i < 3; i++ {
		if err := try(attacker, "wrong"); !authFailed(err) {
			t.Fatalf("failure %d: %v", i, err)
		}
	}
	if failed, limited := m.FailureCounts(); failed != 3 || limited != 0 {
		t.Fatalf("counts %d failed, %d limited; want 3, 0", failed, limited)
	}
	for i := 0; i < 5; i++ {
		if err := try(attacker, "s3cret"); !authFailed(err) {
			t.Fatalf("limited address, correct password: %v, want AuthenticationFailed", err)
		}
	}
	if failed, limited := m.FailureCounts(); failed != 3 || limited != 5 {
		t.Fatalf("counts %d failed, %d limited; want 3, 5", failed, limited)
	}
	if n := strings.Count(logBuf.String(), "too many failed authentications"); n != 1 {
		t.Errorf("%d log lines for the refusals, want 1 (then one per %v):\n%s", n, logInterval, logBuf.String())
	}
	if err := try(other, "s3cret"); err != nil {
		t.Fatalf("another address: %v", err)
	}
	clk.advance(time.Second)
	if err := try(attacker, "s3cret"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	if err := try(attacker, "s3cret"); err != nil {
		t.Fatalf("a success takes no token: %v", err)
	}
}

// TestAuthRateLimitParallel: many parallel guesses from one address test
// at most the burst (plus those checked at the same instant) passwords.
func TestAuthRateLimitParallel(t *testing.T) {
	m := newManager(t)
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	m.limiter.now = clk.now
	m.SetFailureLimit(60, 5)
	addUser(t, m, "admin", "alice", "s3cret")
	const workers, each = 32, 20
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := converse(t, m, &Session{Remote: "10.0.0.1:6000"}, SCRAMSHA256, "alice", "wrong", true); err == nil {
					t.Error("a wrong password was accepted")
				}
			}
		}()
	}
	wg.Wait()
	failed, limited := m.FailureCounts()
	if failed+limited != workers*each {
		t.Fatalf("%d failed + %d limited, want %d attempts", failed, limited, workers*each)
	}
	if failed > 5+workers {
		t.Fatalf("%d passwords tested, want at most the burst (5) plus %d in flight", failed, workers)
	}
	t.Logf("%d of %d attempts tested a password", failed, workers*each)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
