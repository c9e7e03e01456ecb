package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// connFlags are the connection flags MongoDB's database tools share.
type connFlags struct {
	uri      string
	host     string
	port     int
	username string
	password string
	authDB   string
	// TLS, as the tools' --tls flags (with --uri, give them in the URI).
	tls                       bool
	tlsCAFile, tlsCertKeyFile string
	tlsInsecure               bool
}

func (c *connFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.uri, "uri", "", "connection string (mongodb://host:port/...); wins over --host and --port")
	stringFlag(fs, &c.host, "host", "h", "localhost", "server to connect to: host, host:port, or replSet/host1,host2")
	fs.IntVar(&c.port, "port", 0, "server port (default 27017, or the one in --host)")
	stringFlag(fs, &c.username, "username", "u", "", "user name for authentication")
	stringFlag(fs, &c.password, "password", "p", "", "password for authentication")
	fs.StringVar(&c.authDB, "authenticationDatabase", "", "database that holds the user's credentials")
	fs.BoolVar(&c.tls, "tls", false, "connect with TLS")
	fs.StringVar(&c.tlsCAFile, "tlsCAFile", "", "PEM bundle of the authorities to trust for the server's certificate (implies --tls)")
	fs.StringVar(&c.tlsCertKeyFile, "tlsCertificateKeyFile", "", "PEM file with the client's certificate and key (implies --tls)")
	fs.BoolVar(&c.tlsInsecure, "tlsInsecure", false, "do not verify the server's certificate and host name (implies --tls)")
}

// connectionString builds the URI the flags describe. A single host is
// dialled directly (as the tools do); "set/h1,h2" names a replica set.
func (c *connFlags) connectionString() string {
	if c.uri != "" {
		return c.uri
	}
	host, set := c.host, ""
	if i := strings.IndexByte(host, '/'); i >= 0 {
		set, host = host[:i], host[i+1:]
	}
	hosts := strings.Split(host, ",")
	for i, h := range hosts {
		if !strings.Contains(h, ":") || strings.HasSuffix(h, "]") {
			port := 27017
			if c.port != 0 {
				port = c.port
			}
			hosts[i] = h + ":" + strconv.Itoa(port)
		} else if c.port != 0 && len(hosts) == 1 {
			hosts[i] = h[:strings.LastIndexByte(h, ':')] + ":" + strconv.Itoa(c.port)
		}
	}
	q := url.Values{}
	if c.tls || c.tlsCAFile != "" || c.tlsCertKeyFile != "" || c.tlsInsecure {
		q.Set("tls", "true")
	}
	if c.tlsCAFile != "" {
		q.Set("tlsCAFile", c.tlsCAFile)
	}
	if c.tlsCertKeyFile != "" {
		q.Set("tlsCertificateKeyFile", c.tlsCertKeyFile)
	}
	if c.tlsInsecure {
		q.Set("tlsInsecure", "true")
	}
	if set != "" {
		q.Set("replicaSet", set)
	} else if len(hosts) == 1 {
		q.Set("directConnection", "true")
	}
	return "mongodb://" + strings.Join(hosts, ",") + "/?" + q.Encode()
}

// connect dials the server and checks it answers.
func (c *connFlags) connect(ctx context.Context, appName string) (*mongo.Client, error) {
	opts := options.Client().ApplyURI(c.connectionString()).SetAppName(appName)
	if c.username != "" {
		cred := options.Credential{Username: c.username, Password: c.password, PasswordSet: c.password != ""}
		cred.AuthSource = c.authDB
		opts.SetAuth(cred)
	}
	client, err := mongo.Connect(opts)
	if err != nil {
		return nil, fmt.Errorf("connecting: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := client.Ping(pctx, nil); err != nil {
		_ = client.Disconnect(context.Background())
		return nil, fmt.Errorf("connecting to %s: %w", c.connectionString(), err)
	}
	return client, nil
}
