package auth

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Rate limit of failed authentications per client address.
//
// The failure delay (Options.FailureDelay) slows one connection, but a
// client with many connections guesses in parallel: 64 connections
// tested 304 passwords a second. Each client address (the IPv4 address,
// or an IPv6 address's /64) therefore has a token bucket of failures: it holds up to Burst
// tokens, refills at PerMinute tokens a minute, and every failed
// authentication that tested a password (the client's proof was checked
// and wrong) takes one; an unknown user or a mechanism the user has no
// credentials for tests none, can never succeed, and is part of honest
// mechanism negotiation, so it takes nothing. While an address's bucket holds less than one
// token, every SCRAM exchange from it is refused with AuthenticationFailed
// before its password is looked at — the correct password too, or the
// refusals would tell a right guess from a wrong one — and the refusal is
// logged (at most once per logInterval per address, with the count of the
// refusals not logged). Refusals take no token, so an address's guesses
// are held to PerMinute a minute, however many connections it uses.
//
// Honest clients are not slowed: a successful authentication takes
// nothing and is never delayed, and an address may fail Burst times in a
// row (typos, a client retrying an old password) before it is limited.
// The check is made before the exchange's lookup of the user and again
// before its proof is verified, and the failure is taken right after the
// verification, so parallel exchanges can overshoot the limit only by
// those in that short window at once; the bucket may go below zero (to
// -Burst at most) to pay the overshoot back, which also bounds how long an
// address stays limited after its guessing stops: (Burst+1)/PerMinute
// minutes.
//
// Buckets that have refilled are forgotten (swept when the map grows past
// sweepAt), so the map holds only addresses that failed recently.

// Defaults of the limit.
const (
	DefaultFailuresPerMinute = 30
	DefaultFailureBurst      = 10
	logInterval              = 10 * time.Second
	sweepAt                  = 4096
)

type failureLimiter struct {
	perMinute atomic.Int64 // refill rate; 0 turns the limit off
	burst     atomic.Int64
	now       func() time.Time

	mu      sync.Mutex
	buckets map[string]*failBucket
	// sweepNext is the map size at which fail sweeps again.
	sweepNext int
	limited   atomic.Int64 // refusals
	failed    atomic.Int64 // failures counted
}

type failBucket struct {
	tokens     float64
	at         time.Time // when tokens was computed
	logged     time.Time // last refusal logged
	suppressed int64     // refusals not logged since
}

func newFailureLimiter(perMinute, burst int64) *failureLimiter {
	l := &failureLimiter{now: time.Now, buckets: map[string]*failBucket{}}
	l.perMinute.Store(perMinute)
	l.burst.Store(burst)
	return l
}

// clientAddr is the part of a remote address the limit is kept for: the
// IPv4 address, or the /64 network of an IPv6 one (a single host usually
// holds a whole /64, and could otherwise guess from 2^64 addresses).
func clientAddr(remote string) string {
	host := remote
	if h, _, err := net.SplitHostPort(remote); err == nil {
		host = h
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return host
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String() // ::ffff:a.b.c.d is a.b.c.d
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// refill brings b up to now; it reports whether b is full (and can be
// forgotten).
func (l *failureLimiter) refill(b *failBucket, now time.Time, rate, burst float64) bool {
	if el := now.Sub(b.at); el > 0 {
		b.tokens = min(burst, b.tokens+rate*el.Minutes())
		b.at = now
	}
	return b.tokens >= burst
}

// refusal is what allow answers for a limited address: whether to log it
// and how many earlier refusals were not logged.
type refusal struct {
	limited    bool
	log        bool
	suppressed int64
}

// allow reports whether addr may attempt an authentication now.
func (l *failureLimiter) allow(addr string) refusal {
	rate, burst := l.perMinute.Load(), l.burst.Load()
	if rate <= 0 {
		return refusal{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[addr]
	if b == nil {
		return refusal{}
	}
	now := l.now()
	l.refill(b, now, float64(rate), float64(burst))
	if b.tokens >= 1 {
		return refusal{}
	}
	l.limited.Add(1)
	if !b.logged.IsZero() && now.Sub(b.logged) < logInterval {
		b.suppressed++
		return refusal{limited: true}
	}
	r := refusal{limited: true, log: true, suppressed: b.suppressed}
	b.logged, b.suppressed = now, 0
	return r
}

// fail takes a token from addr's bucket.
func (l *failureLimiter) fail(addr string) {
	rate, burst := l.perMinute.Load(), l.burst.Load()
	if rate <= 0 {
		return
	}
	l.failed.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b := l.buckets[addr]
	if b == nil {
		if len(l.buckets) >= max(sweepAt, l.sweepNext) {
			l.sweep(now, float64(rate), float64(burst))
			l.sweepNext = 2 * len(l.buckets)
		}
		b = &failBucket{tokens: float64(burst), at: now}
		l.buckets[addr] = b
	}
	l.refill(b, now, float64(rate), float64(burst))
	b.tokens = max(b.tokens-1, -float64(burst))
}

// sweep forgets the buckets that have refilled.
func (l *failureLimiter) sweep(now time.Time, rate, burst float64) {
	for a, b := range l.buckets {
		if l.refill(b, now, rate, burst) {
			delete(l.buckets, a)
		}
	}
}
