package catalog

import (
	"strings"

	"github.com/cairndb/cairn/internal/mongoerr"
)

// MaxNamespaceLength is the longest "db.collection" MongoDB accepts.
const MaxNamespaceLength = 255

// maxDBNameLength is the longest database name MongoDB accepts.
const maxDBNameLength = 63

// ValidateDBName checks a database name as MongoDB does on Linux.
func ValidateDBName(db string) error {
	if db == "" {
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid database name: ''")
	}
	if len(db) > maxDBNameLength {
		return mongoerr.New(mongoerr.InvalidNamespace, "db name is too long: %q", db)
	}
	if strings.ContainsAny(db, "/\\. \"$\x00") {
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid database name: '%s'", db)
	}
	return nil
}

// ValidateCollectionName checks a collection name for a user collection as
// MongoDB does: not empty, no '$' or NUL, not in the system. namespace
// (except the few MongoDB allows users to create), total namespace length.
func ValidateCollectionName(db, coll string) error {
	if err := ValidateDBName(db); err != nil {
		return err
	}
	if coll == "" {
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid namespace specified '%s.'", db)
	}
	if strings.ContainsAny(coll, "$\x00") || strings.HasPrefix(coll, ".") {
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid collection name: %s", coll)
	}
	if strings.HasPrefix(coll, "system.") && !allowedSystem[coll] && !strings.HasPrefix(coll, "system.buckets.") && !(db == "config" && coll == "system.sessions") && !(db == "local" && coll == "system.replset") {
		return mongoerr.New(mongoerr.InvalidNamespace, "Invalid system namespace: %s.%s", db, coll)
	}
	if len(db)+1+len(coll) > MaxNamespaceLength {
		return mongoerr.New(mongoerr.InvalidNamespace, "Fully qualified namespace is too long. Namespace: %s.%s Max: %d", db, coll, MaxNamespaceLength)
	}
	return nil
}

// allowedSystem are the system collections any database may hold; the
// local database also holds system.replset (the replica set's
// configuration), as mongod's isLegalClientSystemNS; so may the buckets
// collections of time-series collections (system.buckets.*).
var allowedSystem = map[string]bool{"system.js": true, "system.profile": true}
