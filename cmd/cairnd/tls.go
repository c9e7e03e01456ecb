package main

import (
	"errors"
	"flag"

	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/server"
)

// tlsConfig holds mongod's TLS options: --tlsMode, --tlsCertificateKeyFile,
// --tlsCAFile, --tlsClusterFile and --tlsAllowConnectionsWithoutCertificates,
// or net.tls.* in the configuration file.
type tlsConfig struct {
	Mode, CertificateKeyFile, CAFile    string
	ClusterFile                         string
	AllowConnectionsWithoutCertificates bool
}

// tlsFile is the net.tls section of the configuration file.
type tlsFile struct {
	Mode                                *string `yaml:"mode"`
	CertificateKeyFile                  *string `yaml:"certificateKeyFile"`
	CAFile                              *string `yaml:"CAFile"`
	ClusterFile                         *string `yaml:"clusterFile"`
	AllowConnectionsWithoutCertificates *bool   `yaml:"allowConnectionsWithoutCertificates"`
}

func (t *tlsConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&t.Mode, "tlsMode", server.TLSDisabled, "disabled, allowTLS, preferTLS (TLS and plain clients on the same port) or requireTLS")
	fs.StringVar(&t.CertificateKeyFile, "tlsCertificateKeyFile", "", "PEM file with the server's certificate and private key")
	fs.StringVar(&t.CAFile, "tlsCAFile", "", "PEM bundle of the authorities whose client certificates are required and verified")
	fs.StringVar(&t.ClusterFile, "tlsClusterFile", "", "PEM file with the certificate and key a replica set member presents to the others (default: --tlsCertificateKeyFile)")
	fs.BoolVar(&t.AllowConnectionsWithoutCertificates, "tlsAllowConnectionsWithoutCertificates", false, "with --tlsCAFile, also accept clients that present no certificate")
}

// merge applies the file's values for the options not given as flags.
func (t *tlsConfig) merge(f tlsFile, set map[string]bool) {
	if f.Mode != nil && !set["tlsMode"] {
		t.Mode = *f.Mode
	}
	if f.CertificateKeyFile != nil && !set["tlsCertificateKeyFile"] {
		t.CertificateKeyFile = *f.CertificateKeyFile
	}
	if f.CAFile != nil && !set["tlsCAFile"] {
		t.CAFile = *f.CAFile
	}
	if f.ClusterFile != nil && !set["tlsClusterFile"] {
		t.ClusterFile = *f.ClusterFile
	}
	if f.AllowConnectionsWithoutCertificates != nil && !set["tlsAllowConnectionsWithoutCertificates"] {
		t.AllowConnectionsWithoutCertificates = *f.AllowConnectionsWithoutCertificates
	}
}

// options are the server's TLS options (nil when TLS is disabled).
func (t tlsConfig) options() *server.TLSOptions {
	if t.Mode == "" || t.Mode == server.TLSDisabled {
		return nil
	}
	return &server.TLSOptions{Mode: t.Mode, CertificateKeyFile: t.CertificateKeyFile, CAFile: t.CAFile, ClusterFile: t.ClusterFile,
		AllowConnectionsWithoutCertificates: t.AllowConnectionsWithoutCertificates}
}

// check loads the certificates now, so that a bad file is a configuration
// error at startup.
func (t tlsConfig) check() error {
	o := t.options()
	if o == nil {
		// As mongod: TLS settings without a mode that enables TLS are a
		// mistake, not something to ignore.
		if t.CertificateKeyFile != "" || t.CAFile != "" || t.ClusterFile != "" || t.AllowConnectionsWithoutCertificates {
			return errors.New("need to enable TLS via the tlsMode flag when using TLS configuration parameters")
		}
		return nil
	}
	if _, err := o.Config(); err != nil {
		return err
	}
	_, err := o.MemberConfig()
	return err
}

// appendParsed adds net.tls to getCmdLineOpts' parsed options.
func (t tlsConfig) appendParsed(b *bson.Builder) {
	if t.options() == nil {
		return
	}
	b.StartDocument("tls")
	b.AppendString("mode", t.Mode)
	b.AppendString("certificateKeyFile", t.CertificateKeyFile)
	if t.CAFile != "" {
		b.AppendString("CAFile", t.CAFile)
	}
	if t.ClusterFile != "" {
		b.AppendString("clusterFile", t.ClusterFile)
	}
	if t.AllowConnectionsWithoutCertificates {
		b.AppendBool("allowConnectionsWithoutCertificates", true)
	}
	b.End()
}
