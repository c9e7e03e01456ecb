package conformance

// driverSkips lists tests that the official Go driver v2 cannot pass against
// any server, with the driver project's own reason (its test suite skips the
// same tests). Keys are "suite/file/description".
var driverSkips = map[string]string{}

// driverFileSkips are whole files ("suite/file") the Go driver cannot pass.
var driverFileSkips = map[string]string{
	"retryable-reads-unified/gridfs-download":              gridfsEqFilter,
	"retryable-reads-unified/gridfs-download-serverErrors": gridfsEqFilter,
	"retryable-reads-unified/count":                        noCount,
	"retryable-reads-unified/count-serverErrors":           noCount,
}

// memberSkips are tests that need a replica set of more than one member:
// on cairnd's one-member set a secondary read preference finds no server,
// so the driver's server selection times out before any command reaches
// the server whose error the test expects.
var memberSkips = map[string]string{
	"transactions-unified/read-pref/secondary readPreference":                                          needsSecondary,
	"transactions-unified/transaction-options/readPreference inherited from client":                    needsSecondary,
	"transactions-unified/transaction-options/readPreference inherited from defaultTransactionOptions": needsSecondary,
	"transactions-unified/transaction-options/startTransaction overrides readPreference":               needsSecondary,
}

const needsSecondary = "needs a secondary member (a replica set of several members: issue 24); on one member the driver's server selection for a secondary read preference times out"

// The runner sends the CRUD spec's deprecated count with RunCommand, which
// the driver never retries.
const noCount = "has no Collection.count, and RunCommand (which the runner sends count with) is never retried"

const gridfsEqFilter = "finds GridFS files with {_id: {$eq: id}} where the tests expect {_id: id} in the command"

func init() {
	add := func(reason string, file string, descriptions ...string) {
		for _, d := range descriptions {
			driverSkips["crud-unified/"+file+"/"+d] = reason
		}
	}

	const unackHint = "rejects hint on unacknowledged writes client-side (GODRIVER-2125)"
	for _, op := range []string{"deleteMany", "deleteOne"} {
		add(unackHint, "bulkWrite-"+op+"-hint-unacknowledged",
			"Unacknowledged "+op+" with hint string on 4.4+ server",
			"Unacknowledged "+op+" with hint document on 4.4+ server")
		add(unackHint, op+"-hint-unacknowledged",
			"Unacknowledged "+op+" with hint string on 4.4+ server",
			"Unacknowledged "+op+" with hint document on 4.4+ server")
	}
	for _, op := range []string{"replaceOne", "updateMany", "updateOne"} {
		add(unackHint, "bulkWrite-"+op+"-hint-unacknowledged",
			"Unacknowledged "+op+" with hint string on 4.2+ server",
			"Unacknowledged "+op+" with hint document on 4.2+ server")
		add(unackHint, op+"-hint-unacknowledged",
			"Unacknowledged "+op+" with hint string on 4.2+ server",
			"Unacknowledged "+op+" with hint document on 4.2+ server")
	}
	for _, op := range []string{"findOneAndDelete", "findOneAndReplace", "findOneAndUpdate"} {
		add(unackHint, op+"-hint-unacknowledged",
			"Unacknowledged "+op+" with hint string on 4.4+ server",
			"Unacknowledged "+op+" with hint document on 4.4+ server")
	}

	add("does not send bypassDocumentValidation: false (GODRIVER-3407)", "bypassDocumentValidation",
		"Aggregate with $out passes bypassDocumentValidation: false",
		"BulkWrite passes bypassDocumentValidation: false",
		"FindOneAndReplace passes bypassDocumentValidation: false",
		"FindOneAndUpdate passes bypassDocumentValidation: false",
		"InsertMany passes bypassDocumentValidation: false",
		"InsertOne passes bypassDocumentValidation: false",
		"ReplaceOne passes bypassDocumentValidation: false",
		"UpdateMany passes bypassDocumentValidation: false",
		"UpdateOne passes bypassDocumentValidation: false")

	add("replaces a null _id with a generated ObjectId (GODRIVER-3392)", "create-null-ids",
		"inserting _id with type null via clientBulkWrite")

	add("sends batchSize limit+1 when batchSize equals limit (GODRIVER-3395)", "find",
		"Find with batchSize equal to limit")
}
