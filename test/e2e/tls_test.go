package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cairndb/cairn/internal/testutil/cairndtest"
)

// testPKI is a throw-away certificate authority with a server certificate
// for 127.0.0.1 and a client certificate, plus a client certificate from
// another authority.
type testPKI struct {
	caFile, serverFile string
	caPool             *x509.CertPool
	client, stranger   tls.Certificate
}

type issuer struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newCert(t *testing.T, tmpl *x509.Certificate, parent *issuer) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = big.NewInt(time.Now().UnixNano())
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(time.Hour)
	signer, signerCert := key, tmpl
	if parent != nil {
		signer, signerCert = parent.key, parent.cert
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key, der
}

func pemOf(t *testing.T, der []byte, key *ecdsa.PrivateKey) []byte {
	t.Helper()
	out := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if key != nil {
		kb, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})...)
	}
	return out
}

func newPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	caTmpl := func(cn string) *x509.Certificate {
		return &x509.Certificate{Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	}
	caCert, caKey, caDER := newCert(t, caTmpl("cairn test CA"), nil)
	ca := &issuer{caCert, caKey}
	_, srvKey, srvDER := newCert(t, &x509.Certificate{Subject: pkix.Name{CommonName: "cairnd"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}, ca)
	clientCert := func(parent *issuer) tls.Certificate {
		_, k, der := newCert(t, &x509.Certificate{Subject: pkix.Name{CommonName: "client"},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, parent)
		kb, _ := x509.MarshalECPrivateKey(k)
		c, err := tls.X509KeyPair(pemOf(t, der, nil), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	otherCert, otherKey, _ := newCert(t, caTmpl("someone else"), nil)
	p := &testPKI{caFile: filepath.Join(dir, "ca.pem"), serverFile: filepath.Join(dir, "server.pem"), caPool: x509.NewCertPool(),
		client: clientCert(ca), stranger: clientCert(&issuer{otherCert, otherKey})}
	p.caPool.AddCert(caCert)
	if err := os.WriteFile(p.caFile, pemOf(t, caDER, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.serverFile, pemOf(t, srvDER, srvKey), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// tlsPing connects with cfg (nil: plain) and reports whether a ping and an
// insert succeed.
func tlsPing(t *testing.T, uri string, cfg *tls.Config) error {
	t.Helper()
	o := options.Client().ApplyURI(uri).SetServerSelectionTimeout(1500 * time.Millisecond).SetTimeout(10 * time.Second)
	if cfg != nil {
		o.SetTLSConfig(cfg)
	}
	client, err := mongo.Connect(o)
	if err != nil {
		return err
	}
	defer client.Disconnect(context.Background())
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.Ping(c, nil); err != nil {
		return err
	}
	_, err = client.Database("t").Collection("c").InsertOne(c, bson.D{{Key: "x", Value: 1}})
	return err
}

func TestTLSModes(t *testing.T) {
	pki := newPKI(t)
	withCert := func(certs ...tls.Certificate) *tls.Config {
		return &tls.Config{RootCAs: pki.caPool, Certificates: certs}
	}
	tls11 := &tls.Config{RootCAs: pki.caPool, MaxVersion: tls.VersionTLS11}
	// Go's client would leave out a certificate the server's CA list does
	// not name; present it anyway.
	stranger := &tls.Config{RootCAs: pki.caPool, GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		return &pki.stranger, nil
	}}
	cases := []struct {
		name string
		args []string
		// connections that must succeed / fail
		ok, refused map[string]*tls.Config
	}{
		{"requireTLS", []string{"--tlsMode", "requireTLS", "--tlsCertificateKeyFile", pki.serverFile},
			map[string]*tls.Config{"tls": withCert(), "tls with client cert": withCert(pki.client)},
			map[string]*tls.Config{"plain": nil, "TLS 1.1": tls11}},
		{"allowTLS", []string{"--tlsMode", "allowTLS", "--tlsCertificateKeyFile", pki.serverFile},
			map[string]*tls.Config{"tls": withCert(), "plain": nil}, nil},
		{"preferTLS", []string{"--tlsMode", "preferTLS", "--tlsCertificateKeyFile", pki.serverFile},
			map[string]*tls.Config{"tls": withCert(), "plain": nil}, map[string]*tls.Config{"TLS 1.1": tls11}},
		{"client certificates required", []string{"--tlsMode", "requireTLS", "--tlsCertificateKeyFile", pki.serverFile, "--tlsCAFile", pki.caFile},
			map[string]*tls.Config{"client cert": withCert(pki.client)},
			map[string]*tls.Config{"no client cert": withCert(), "untrusted client cert": stranger, "plain": nil}},
		{"certificates optional", []string{"--tlsMode", "preferTLS", "--tlsCertificateKeyFile", pki.serverFile, "--tlsCAFile", pki.caFile, "--tlsAllowConnectionsWithoutCertificates"},
			map[string]*tls.Config{"client cert": withCert(pki.client), "no client cert": withCert(), "plain": nil},
			map[string]*tls.Config{"untrusted client cert": stranger}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := cairndtest.Start(t, tc.args...)
			for name, cfg := range tc.ok {
				if err := tlsPing(t, srv.URI, cfg); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
			for name, cfg := range tc.refused {
				if err := tlsPing(t, srv.URI, cfg); err == nil {
					t.Errorf("%s: connected, want refused", name)
				}
			}
		})
	}
}
