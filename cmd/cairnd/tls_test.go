package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a self-signed certificate and its key to a PEM file.
func selfSigned(t *testing.T, path string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cairnd"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	out := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})...)
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTLSClusterFile: --tlsClusterFile (net.tls.clusterFile) is the
// certificate members present to each other, checked at startup, reported
// by getCmdLineOpts, and members connect with TLS in preferTLS and
// requireTLS modes only.
func TestTLSClusterFile(t *testing.T) {
	dir := t.TempDir()
	cert, cluster := filepath.Join(dir, "server.pem"), filepath.Join(dir, "cluster.pem")
	selfSigned(t, cert)
	selfSigned(t, cluster)
	conf := filepath.Join(dir, "tls.yaml")
	os.WriteFile(conf, []byte("net:\n  tls:\n    mode: preferTLS\n    certificateKeyFile: "+cert+"\n    clusterFile: "+cluster+"\n"), 0o644)
	cases := []struct {
		name   string
		args   []string
		member bool // members connect with TLS
		parsed bool // getCmdLineOpts shows net.tls.clusterFile
		err    string
	}{
		{"flag", []string{"--tlsMode", "requireTLS", "--tlsCertificateKeyFile", cert, "--tlsClusterFile", cluster}, true, true, ""},
		{"file", []string{"--config", conf}, true, true, ""},
		{"allowTLS: plain between members", []string{"--tlsMode", "allowTLS", "--tlsCertificateKeyFile", cert, "--tlsClusterFile", cluster}, false, true, ""},
		{"no cluster file: the server's certificate", []string{"--tlsMode", "requireTLS", "--tlsCertificateKeyFile", cert}, true, false, ""},
		{"missing cluster file", []string{"--tlsMode", "requireTLS", "--tlsCertificateKeyFile", cert, "--tlsClusterFile", filepath.Join(dir, "none.pem")}, false, false, "loading the cluster certificate"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			c, err := parseArgs(tc.args, &stderr)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mc, err := c.tls.options().MemberConfig()
			if err != nil {
				t.Fatal(err)
			}
			if (mc != nil) != tc.member {
				t.Fatalf("member TLS configuration %v, want TLS %v", mc, tc.member)
			}
			if got := strings.Contains(c.parsedDoc().String(), `clusterFile: "`+cluster+`"`); got != tc.parsed {
				t.Errorf("parsed %s: net.tls.clusterFile shown %v, want %v", c.parsedDoc(), got, tc.parsed)
			}
		})
	}
}
