package main

// Replica-set chores for bench/ycsb-replset.sh, so that it needs no
// mongosh: -initiate NAME/HOST1,HOST2,... runs replSetInitiate on the first
// host (one member per host, _id in order) and waits until one member is
// PRIMARY and every other SECONDARY; -raftstats prints the commit latency
// of the -uri server's serverStatus().repl.raft.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// initiate initiates the set spec ("rs0/h1,h2,h3") and waits (up to
// timeout) until it has a primary and every other member is secondary.
func initiate(ctx context.Context, spec string, timeout time.Duration) error {
	name, list, ok := strings.Cut(spec, "/")
	hosts := strings.Split(list, ",")
	if !ok || name == "" || list == "" {
		return fmt.Errorf("-initiate %q: want NAME/HOST,HOST,...", spec)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client, err := mongo.Connect(options.Client().ApplyURI("mongodb://" + hosts[0] + "/?directConnection=true"))
	if err != nil {
		return err
	}
	defer func() { _ = client.Disconnect(context.Background()) }()
	admin := client.Database("admin")
	for admin.RunCommand(ctx, bson.D{{Key: "ping", Value: 1}}).Err() != nil {
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("%s does not answer: %w", hosts[0], err)
		}
	}
	members := bson.A{}
	for i, h := range hosts {
		members = append(members, bson.D{{Key: "_id", Value: i}, {Key: "host", Value: h}})
	}
	cfg := bson.D{{Key: "_id", Value: name}, {Key: "members", Value: members}}
	if err := admin.RunCommand(ctx, bson.D{{Key: "replSetInitiate", Value: cfg}}).Err(); err != nil {
		return fmt.Errorf("replSetInitiate: %w", err)
	}
	want := "PRIMARY" + strings.Repeat(",SECONDARY", len(hosts)-1)
	last := ""
	for {
		var st struct {
			Members []struct {
				StateStr string `bson:"stateStr"`
			} `bson:"members"`
		}
		if err := admin.RunCommand(ctx, bson.D{{Key: "replSetGetStatus", Value: 1}}).Decode(&st); err == nil {
			var states []string
			for _, m := range st.Members {
				states = append(states, m.StateStr)
			}
			sort.Strings(states)
			if last = strings.Join(states, ","); last == want {
				return nil
			}
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return fmt.Errorf("the set did not settle (last states %q): %w", last, err)
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// raftStats prints the commit latency of the server at uri.
func raftStats(ctx context.Context, uri string) error {
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		return err
	}
	defer func() { _ = client.Disconnect(context.Background()) }()
	var st struct {
		Repl struct {
			Raft struct {
				CommitLatency struct {
					Count       int64 `bson:"count"`
					TotalMicros int64 `bson:"totalMicros"`
				} `bson:"commitLatency"`
			} `bson:"raft"`
		} `bson:"repl"`
	}
	if err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "serverStatus", Value: 1}}).Decode(&st); err != nil {
		return err
	}
	cl := st.Repl.Raft.CommitLatency
	if cl.Count == 0 {
		return errors.New("serverStatus: no commit measured (not the primary?)")
	}
	fmt.Printf("commit latency on the primary: %d batches, mean %d µs\n", cl.Count, cl.TotalMicros/cl.Count)
	return nil
}
