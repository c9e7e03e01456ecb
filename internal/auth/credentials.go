package auth

import (
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/xdg-go/scram"
	"github.com/xdg-go/stringprep"

	"github.com/cairndb/cairn/internal/mongoerr"
)

// The SCRAM mechanisms Cairn supports, in MongoDB's spelling.
const (
	SCRAMSHA1   = "SCRAM-SHA-1"
	SCRAMSHA256 = "SCRAM-SHA-256"
)

// Mechanisms are the supported mechanisms, in the order hello lists them.
var Mechanisms = []string{SCRAMSHA1, SCRAMSHA256}

// Default iteration counts: mongod's scramIterationCount and
// scramSHA256IterationCount.
const (
	DefaultSHA1Iterations   = 10000
	DefaultSHA256Iterations = 15000
)

// Credential is what the server keeps of one password for one mechanism.
type Credential struct {
	Iterations int
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
}

// hashOf returns the SCRAM hash function of a mechanism.
func hashOf(mech string) (scram.HashGeneratorFcn, bool) {
	switch mech {
	case SCRAMSHA1:
		return scram.SHA1, true
	case SCRAMSHA256:
		return scram.SHA256, true
	}
	return nil, false
}

// mongoPasswordDigest is the password SCRAM-SHA-1 uses in MongoDB:
// hex(md5(user + ":mongo:" + password)), as every driver computes it.
func mongoPasswordDigest(user, password string) string {
	h := md5.New()
	h.Write([]byte(user + ":mongo:" + password))
	return hex.EncodeToString(h.Sum(nil))
}

// NewCredential derives mech's credential for user and password with a
// fresh random salt. SCRAM-SHA-256 passwords are SASLprepped (a password
// SASLprep refuses is a BadValue error); SCRAM-SHA-1 uses MongoDB's digest.
func NewCredential(mech, user, password string, iterations int) (Credential, error) {
	hf, ok := hashOf(mech)
	if !ok {
		return Credential{}, mongoerr.New(mongoerr.BadValue, "Unknown auth mechanism '%s'", mech)
	}
	var client *scram.Client
	saltLen := 16
	switch mech {
	case SCRAMSHA1:
		if iterations <= 0 {
			iterations = DefaultSHA1Iterations
		}
		client, _ = hf.NewClientUnprepped(user, mongoPasswordDigest(user, password), "")
	case SCRAMSHA256:
		if iterations <= 0 {
			iterations = DefaultSHA256Iterations
		}
		saltLen = 28
		prepped, err := stringprep.SASLprep.Prepare(password)
		if err != nil {
			return Credential{}, mongoerr.New(mongoerr.BadValue, "Error SASLprepping password: the password contains characters SASLprep does not allow")
		}
		client, _ = hf.NewClientUnprepped(user, prepped, "")
	}
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return Credential{}, fmt.Errorf("auth: salt: %w", err)
	}
	sc, err := client.GetStoredCredentialsWithError(scram.KeyFactors{Salt: string(salt), Iters: iterations})
	if err != nil {
		return Credential{}, fmt.Errorf("auth: deriving keys: %w", err)
	}
	return Credential{Iterations: iterations, Salt: salt, StoredKey: sc.StoredKey, ServerKey: sc.ServerKey}, nil
}

func (c Credential) stored() scram.StoredCredentials {
	return scram.StoredCredentials{KeyFactors: scram.KeyFactors{Salt: string(c.Salt), Iters: c.Iterations},
		StoredKey: c.StoredKey, ServerKey: c.ServerKey}
}
