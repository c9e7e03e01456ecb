package params

// The Stable API (apiVersion, apiStrict, apiDeprecationErrors), checked as
// mongod 7.0's initializeAPIParameters checks them once the command is
// known:
//
//   - the three fields' types (IDL), apiStrict or apiDeprecationErrors
//     without apiVersion (4886600), an apiVersion other than "1"
//     (APIVersionError, 322: mongod accepts "2" only with its test
//     parameter acceptApiVersion2, which Cairn has not);
//   - apiStrict: true with a command outside API Version 1 (apiV1 below,
//     mongod's apiVersions() per command): APIStrictError (323);
//   - apiDeprecationErrors: true with a command deprecated in the version:
//     APIDeprecationError (324);
//   - apiStrict: true with an aggregation stage mongod registers as never in
//     API Version 1 (or internal), at any depth of the pipeline:
//     APIStrictError.

import (
	"github.com/cairndb/cairn/bson"
	"github.com/cairndb/cairn/internal/mongoerr"
)

// apiCommand is a command's place in API Version 1.
type apiCommand struct {
	deprecated bool // deprecated in API Version 1
}

// apiV1 holds the commands of API Version 1: mongod 7.0's commands whose
// apiVersions() is {"1"} (isMaster is not one; hello is), and its test
// commands that are in version 1.
var apiV1 = map[string]apiCommand{
	"abortTransaction": {}, "aggregate": {}, "authenticate": {}, "collMod": {},
	"commitTransaction": {}, "count": {}, "create": {}, "createIndexes": {},
	"delete": {}, "drop": {}, "dropDatabase": {}, "dropIndexes": {},
	"endSessions": {}, "explain": {}, "find": {}, "findAndModify": {},
	"getMore": {}, "hello": {}, "insert": {}, "killCursors": {},
	"listCollections": {}, "listDatabases": {}, "listIndexes": {}, "ping": {},
	"refreshSessions": {}, "saslContinue": {}, "saslStart": {}, "update": {},
	// Test commands (enableTestCommands): testVersion2 is in version 2
	// only; testDeprecationInVersion2 is deprecated in version 2 only.
	"testVersions1And2": {}, "testDeprecation": {deprecated: true},
	"testDeprecationInVersion2": {},
}

// neverInV1Stages are the stages mongod 7.0 registers with
// AllowedWithApiStrict::kNeverInVersion1.
var neverInV1Stages = map[string]bool{
	"$currentOp": true, "$indexStats": true, "$listLocalSessions": true, "$listSessions": true,
	"$planCacheStats": true, "$listCatalog": true, "$search": true, "$searchMeta": true,
	"$vectorSearch": true, "$listSearchIndexes": true, "$listSampledQueries": true,
	"$queryStats": true, "$shardedDataDistribution": true, "$changeStreamSplitLargeEvent": true,
}

// CheckAPI applies the Stable API rules to the command cmd (its
// canonical name) whose request is body.
func CheckAPI(cmd string, body bson.Doc) error {
	var version string
	var hasVersion, strict, deprecationErrors, hasStrict, hasDeprecation bool
	for _, f := range [...]string{"apiVersion", "apiStrict", "apiDeprecationErrors"} {
		v, ok := body.Lookup(f)
		if !ok {
			continue
		}
		if f == "apiVersion" {
			if v.Type != bson.TypeString {
				return mongoerr.New(mongoerr.TypeMismatch, "BSON field 'apiVersion' is the wrong type '%s', expected type 'string'", v.Type)
			}
			version, hasVersion = v.StringValue(), true
			continue
		}
		if v.Type != bson.TypeBoolean {
			return mongoerr.New(mongoerr.TypeMismatch, "BSON field '%s' is the wrong type '%s', expected type 'bool'", f, v.Type)
		}
		if f == "apiStrict" {
			strict, hasStrict = v.Boolean(), true
		} else {
			deprecationErrors, hasDeprecation = v.Boolean(), true
		}
	}
	if !hasVersion {
		if hasStrict || hasDeprecation {
			return mongoerr.New(mongoerr.APIParamsWithoutVersion, "Provided apiStrict and/or apiDeprecationErrors without passing apiVersion")
		}
		return nil
	}
	if version != "1" {
		return mongoerr.New(mongoerr.APIVersionError, "API version must be \"1\"")
	}
	info, inV1 := apiV1[cmd]
	if strict && !inV1 {
		return mongoerr.New(mongoerr.APIStrictError, "Provided apiStrict:true, but the command %s is not in API Version %s", cmd, version)
	}
	if deprecationErrors && inV1 && info.deprecated {
		return mongoerr.New(mongoerr.APIDeprecationError, "Provided apiDeprecationErrors:true, but the command %s is deprecated in API Version %s", cmd, version)
	}
	if strict && cmd == "aggregate" {
		if p, ok := body.Lookup("pipeline"); ok && p.Type == bson.TypeArray {
			return checkStrictStages(p.Document(), version)
		}
	}
	return nil
}

// checkStrictStages refuses the stages of pipeline (and of the pipelines
// of its $lookup, $unionWith and $facet stages) that API Version 1 does
// not have.
func checkStrictStages(pipeline bson.Doc, version string) error {
	it := pipeline.Iter()
	for it.Next() {
		st := it.Element().Value
		if st.Type != bson.TypeDocument {
			continue // the pipeline's parser reports it
		}
		si := st.Document().Iter()
		if !si.Next() {
			continue
		}
		name, spec := si.Element().Key, si.Element().Value
		if neverInV1Stages[name] {
			return mongoerr.New(mongoerr.APIStrictError, "%s is not allowed with 'apiStrict: true' in API Version %s", name, version)
		}
		if len(name) > 2 && name[:2] == "$_" {
			return mongoerr.New(mongoerr.APIStrictError, "%s cannot be specified with 'apiStrict: true' in API Version %s", name, version)
		}
		if spec.Type != bson.TypeDocument {
			continue
		}
		var subs []bson.Value
		switch name {
		case "$lookup", "$unionWith":
			if sub, ok := spec.Document().Lookup("pipeline"); ok {
				subs = append(subs, sub)
			}
		case "$facet":
			fi := spec.Document().Iter()
			for fi.Next() {
				subs = append(subs, fi.Element().Value)
			}
		}
		for _, sub := range subs {
			if sub.Type != bson.TypeArray {
				continue
			}
			if err := checkStrictStages(sub.Document(), version); err != nil {
				return err
			}
		}
	}
	return nil
}
