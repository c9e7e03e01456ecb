package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"
)

// TLS modes, as mongod's --tlsMode names them. allowTLS and preferTLS
// both accept TLS and plain clients on the same port; they differ in the
// connections a member of a replica set makes to the others, plain with
// allowTLS and TLS with preferTLS and requireTLS (MemberConfig).
const (
	TLSDisabled = "disabled"
	TLSAllow    = "allowTLS"
	TLSPrefer   = "preferTLS"
	TLSRequire  = "requireTLS"
)

// TLSOptions configure TLS on the listener.
type TLSOptions struct {
	// Mode is one of the TLS* constants ("" means disabled).
	Mode string
	// CertificateKeyFile is a PEM file holding the server's certificate
	// chain and its private key (--tlsCertificateKeyFile).
	CertificateKeyFile string
	// CAFile is a PEM bundle of the authorities that sign client
	// certificates (--tlsCAFile); when set, clients must present a
	// certificate they signed unless AllowConnectionsWithoutCertificates.
	CAFile string
	// AllowConnectionsWithoutCertificates accepts clients that present no
	// certificate (a certificate that is presented is still verified).
	AllowConnectionsWithoutCertificates bool
	// ClusterFile is the PEM file of the certificate and key a member
	// presents to the others (--tlsClusterFile; "": CertificateKeyFile).
	ClusterFile string
	// HandshakeTimeout bounds detection and handshake of a new connection
	// (default 10 s).
	HandshakeTimeout time.Duration
}

// enabled reports whether TLS is accepted at all.
func (o *TLSOptions) enabled() bool { return o != nil && o.Mode != "" && o.Mode != TLSDisabled }

// Config builds the crypto/tls configuration: TLS 1.2 at least, the
// server's certificate, and client certificate verification when a CA
// file is given.
func (o *TLSOptions) Config() (*tls.Config, error) {
	switch o.Mode {
	case TLSAllow, TLSPrefer, TLSRequire:
	default:
		return nil, fmt.Errorf("tlsMode %q: expected disabled, allowTLS, preferTLS or requireTLS", o.Mode)
	}
	if o.CertificateKeyFile == "" {
		return nil, errors.New("need tlsCertificateKeyFile when TLS is enabled")
	}
	cert, err := tls.LoadX509KeyPair(o.CertificateKeyFile, o.CertificateKeyFile)
	if err != nil {
		return nil, fmt.Errorf("loading tlsCertificateKeyFile %s: %w", o.CertificateKeyFile, err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if o.CAFile != "" {
		pool, err := loadPool(o.CAFile)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
		if o.AllowConnectionsWithoutCertificates {
			cfg.ClientAuth = tls.VerifyClientCertIfGiven
		}
	}
	return cfg, nil
}

// MemberConfig is the TLS configuration of the connections a member of a
// replica set makes to the other members, as mongod's: TLS in preferTLS
// and requireTLS modes (nil, plain, otherwise), presenting the cluster
// certificate (--tlsClusterFile, else --tlsCertificateKeyFile) and
// verifying the peer's certificate and host name against --tlsCAFile (the
// system's authorities without one).
func (o *TLSOptions) MemberConfig() (*tls.Config, error) {
	if o == nil || (o.Mode != TLSPrefer && o.Mode != TLSRequire) {
		return nil, nil
	}
	certFile := o.ClusterFile
	if certFile == "" {
		certFile = o.CertificateKeyFile
	}
	cert, err := tls.LoadX509KeyPair(certFile, certFile)
	if err != nil {
		return nil, fmt.Errorf("loading the cluster certificate %s: %w", certFile, err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if o.CAFile != "" {
		pool, err := loadPool(o.CAFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

func loadPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading tlsCAFile: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("tlsCAFile %s holds no PEM certificate", file)
	}
	return pool, nil
}

// tlsConn negotiates the connection's transport on its first read: in
// requireTLS mode a TLS handshake, in allowTLS/preferTLS mode a TLS
// handshake if the client's first bytes are a TLS ClientHello record and
// plain wire protocol otherwise. Close and the deadlines act on the
// socket; reads and writes go through the negotiated transport. It is
// read and written by the connection's goroutine only.
type tlsConn struct {
	net.Conn // the socket
	cfg      *tls.Config
	require  bool
	timeout  time.Duration
	log      *slog.Logger
	rw       io.ReadWriter // set once negotiated
	err      error
}

func newTLSConn(nc net.Conn, o *TLSOptions, cfg *tls.Config, log *slog.Logger) *tlsConn {
	t := o.HandshakeTimeout
	if t <= 0 {
		t = 10 * time.Second
	}
	return &tlsConn{Conn: nc, cfg: cfg, require: o.Mode == TLSRequire, timeout: t, log: log}
}

// NetConn is the socket under TLS (the disconnect watcher peeks at it).
func (c *tlsConn) NetConn() net.Conn { return c.Conn }

func (c *tlsConn) Read(p []byte) (int, error) {
	if c.rw == nil && !c.negotiate() {
		return 0, c.err
	}
	return c.rw.Read(p)
}

func (c *tlsConn) Write(p []byte) (int, error) {
	if c.rw == nil {
		return 0, errors.New("server: write before the transport was negotiated")
	}
	return c.rw.Write(p)
}

// looksLikeTLS reports whether the first bytes are a TLS handshake record
// holding a ClientHello: content type 22, protocol major version 3,
// handshake type 1. A wire message starts with its little-endian length,
// so a plain client would need a first message of a very particular size
// and request id to be mistaken for TLS.
func looksLikeTLS(b []byte) bool {
	return len(b) >= 6 && b[0] == 0x16 && b[1] == 0x03 && b[5] == 0x01
}

// prefixConn replays bytes already read before the socket's.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

func (c *tlsConn) negotiate() bool {
	if c.err != nil {
		return false
	}
	_ = c.Conn.SetReadDeadline(time.Now().Add(c.timeout))
	defer c.Conn.SetReadDeadline(time.Time{})
	var under net.Conn = c.Conn
	if !c.require {
		// Peek at the first bytes: a ClientHello record header and the
		// handshake type, or a wire message header.
		var head [6]byte
		n, err := io.ReadFull(c.Conn, head[:])
		if err != nil {
			if n == 0 && errors.Is(err, io.EOF) {
				c.err = io.EOF
			} else {
				c.err = fmt.Errorf("server: reading the first bytes of a connection: %w", err)
			}
			return false
		}
		under = &prefixConn{Conn: c.Conn, prefix: head[:]}
		if !looksLikeTLS(head[:]) {
			c.rw = under
			return true
		}
	}
	tc := tls.Server(under, c.cfg)
	_ = c.Conn.SetDeadline(time.Now().Add(c.timeout))
	err := tc.Handshake()
	_ = c.Conn.SetDeadline(time.Time{})
	if err != nil {
		c.err = fmt.Errorf("server: TLS handshake: %w", err)
		c.log.Info("TLS handshake failed", "c", "NETWORK", "id", 22988, "ctx", "conn", "remote", c.RemoteAddr().String(), "error", err.Error())
		return false
	}
	c.rw = tc
	return true
}
