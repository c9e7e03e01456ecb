package e2e

// TLS between the members of a set: with --tlsMode requireTLS the members
// connect to each other with TLS, presenting the cluster certificate
// (--tlsClusterFile) and verifying the peer's against --tlsCAFile, as
// mongod's internal connections.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// memberPKI is a throw-away authority with the members' server
// certificate (server authentication only, for 127.0.0.1), their cluster
// certificate (client authentication only) and a client certificate for
// the test's clients.
type memberPKI struct {
	caFile, serverFile, clusterFile string
	client                          *tls.Config
}

func newMemberPKI(t *testing.T) *memberPKI {
	t.Helper()
	dir := t.TempDir()
	caCert, caKey, caDER := newCert(t, &x509.Certificate{Subject: pkix.Name{CommonName: "cairn members CA"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}, nil)
	ca := &issuer{caCert, caKey}
	_, srvKey, srvDER := newCert(t, &x509.Certificate{Subject: pkix.Name{CommonName: "cairnd member"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}, ca)
	_, clKey, clDER := newCert(t, &x509.Certificate{Subject: pkix.Name{CommonName: "cairnd cluster", Organization: []string{"cairn"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, ca)
	_, cKey, cDER := newCert(t, &x509.Certificate{Subject: pkix.Name{CommonName: "test client"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, ca)
	p := &memberPKI{caFile: filepath.Join(dir, "ca.pem"), serverFile: filepath.Join(dir, "member.pem"), clusterFile: filepath.Join(dir, "cluster.pem")}
	for file, content := range map[string][]byte{p.caFile: pemOf(t, caDER, nil), p.serverFile: pemOf(t, srvDER, srvKey), p.clusterFile: pemOf(t, clDER, clKey)} {
		if err := os.WriteFile(file, content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kb, err := x509.MarshalECPrivateKey(cKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(pemOf(t, cDER, nil), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	p.client = &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}
	return p
}

// TestRaftTLS: three members with --tlsMode requireTLS, client
// certificates required (--tlsCAFile) and a cluster certificate of their
// own (--tlsClusterFile; the server certificate is not valid for client
// authentication, so members that presented it, or connected without TLS,
// would never form the set). The set elects a primary, replicates a
// majority write to both secondaries, and refuses plain clients and TLS
// clients without a certificate.
func TestRaftTLS(t *testing.T) {
	pki := newMemberPKI(t)
	s := newRaftSet(t, 3, "--tlsMode", "requireTLS", "--tlsCertificateKeyFile", pki.serverFile,
		"--tlsCAFile", pki.caFile, "--tlsClusterFile", pki.clusterFile)
	s.tls = pki.client
	s.launch([]bson.D{nil, nil, nil})

	coll := s.client().Database("test").Collection("tls", options.Collection().SetWriteConcern(writeconcern.Majority()))
	if _, err := coll.InsertOne(ctx(t), bson.D{{Key: "_id", Value: 1}, {Key: "over", Value: "tls"}}); err != nil {
		t.Fatalf("majority write on a TLS set: %v\n%s", err, s.logs())
	}
	p := s.primary()
	for i := range s.members {
		if i != p {
			if got := s.waitDoc(s.direct(i), "tls", bson.D{{Key: "_id", Value: 1}}); got["over"] != "tls" {
				t.Fatalf("member %d: %v", i, got)
			}
		}
	}
	uri := "mongodb://" + s.host(1) + "/?directConnection=true"
	if err := pingWith(uri, pki.client); err != nil {
		t.Fatalf("a TLS client with a certificate: %v", err)
	}
	if err := pingWith(uri, nil); err == nil {
		t.Fatal("a plain client connected to a requireTLS member")
	}
	if err := pingWith(uri, &tls.Config{RootCAs: pki.client.RootCAs}); err == nil {
		t.Fatal("a TLS client without a certificate connected to a member requiring them")
	}
}

// pingWith connects with cfg (nil: plain) and pings.
func pingWith(uri string, cfg *tls.Config) error {
	o := options.Client().ApplyURI(uri).SetServerSelectionTimeout(1500 * time.Millisecond).SetTimeout(5 * time.Second)
	if cfg != nil {
		o.SetTLSConfig(cfg.Clone())
	}
	client, err := mongo.Connect(o)
	if err != nil {
		return err
	}
	defer client.Disconnect(context.Background())
	return client.Ping(context.Background(), nil)
}
