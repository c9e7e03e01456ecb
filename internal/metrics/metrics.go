// Package metrics owns Cairn's Prometheus endpoint: it exposes the figures
// serverStatus reports — connections, opcounters, network, documents, and
// the storage engine's journal, checkpoint and file figures — with
// conventional names, plus command latency histograms by class and, on a
// member of a set of several members, the replication figures (Raft term,
// leader changes, commit latency, each member's lag). Counters
// are read from the server's own statistics at scrape time, so serving
// metrics costs the request path nothing but the histogram observation.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cairndb/cairn/internal/command"
	"github.com/cairndb/cairn/internal/raftrepl"
)

// collector reads the server's statistics at scrape time.
type collector struct {
	env   *command.Env
	descs map[string]*prometheus.Desc
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("cairn_"+name, help, labels, nil)
}

func newCollector(env *command.Env) *collector {
	return &collector{env: env, descs: map[string]*prometheus.Desc{
		"conns":      desc("connections", "Open client connections."),
		"connsTotal": desc("connections_created_total", "Client connections accepted since start."),
		"ops":        desc("operations_total", "Operations by type, as serverStatus opcounters.", "type"),
		"bytesIn":    desc("network_received_bytes_total", "Bytes received from clients."),
		"bytesOut":   desc("network_sent_bytes_total", "Bytes sent to clients."),
		"requests":   desc("network_requests_total", "Requests received."),
		"returned":   desc("documents_returned_total", "Documents returned by queries."),
		"docs":       desc("documents_total", "Documents inserted, matched by updates, and deleted (serverStatus metrics.document).", "state"),
		"cursors":    desc("cursors_open", "Open cursors."),
		"examined":   desc("query_examined_total", "Index keys and documents examined by queries and writes (serverStatus metrics.queryExecutor).", "kind"),
		"sorts":      desc("scan_and_order_total", "Queries and writes that sorted in memory (serverStatus metrics.operation.scanAndOrder)."),
		"maxTime":    desc("max_time_expired_total", "Operations ended by their maxTimeMS."),
		"asserts":    desc("asserts_total", "Commands that failed on an internal error (regular) or answered an error, and write errors (user).", "type"),
		"rejected":   desc("connections_rejected_total", "Connections refused at the maxConns limit."),
		"wQueue":     desc("writers_queued", "Commands waiting for the storage engine's writer lock (serverStatus globalLock.currentQueue.writers)."),
		"wActive":    desc("writers_active", "Commands holding the writer lock (serverStatus globalLock.activeClients.writers)."),
		"wWaits":     desc("writer_lock_waits_total", "Writer-lock acquisitions that waited behind another writer."),
		"wWaitSecs":  desc("writer_lock_wait_seconds_total", "Time spent waiting for the writer lock."),
		"commits":    desc("kv_commits_total", "Storage engine commits."),
		"fsyncs":     desc("kv_journal_fsyncs_total", "Journal fdatasync calls (one per commit group)."),
		"fsyncSecs":  desc("kv_journal_fsync_seconds_total", "Time spent in journal fdatasync calls."),
		"jWritten":   desc("kv_journal_written_bytes_total", "Journal bytes written (compressed records with headers)."),
		"jPayload":   desc("kv_journal_payload_bytes_total", "Uncompressed payload bytes of the journal records written."),
		"groupMax":   desc("kv_group_commit_max", "Largest number of commits made durable by one fdatasync."),
		"ckpts":      desc("kv_checkpoints_total", "Checkpoints completed."),
		"ckptPages":  desc("kv_checkpoint_pages_total", "Pages written by checkpoints."),
		"dataBytes":  desc("kv_data_file_bytes", "Size of the data file."),
		"freePages":  desc("kv_free_pages", "Pages reusable now."),
		"journalUse": desc("kv_journal_bytes", "Journal bytes used in the current cycle."),
		"failed":     desc("kv_failed", "1 when the engine refuses writes after an I/O failure."),
		"cacheBytes": desc("kv_cache_bytes", "Bytes of clean leaves held by the page cache (bounded by the cache size)."),
		"cacheMax":   desc("kv_cache_budget_bytes", "The page cache's budget (storage.wiredTiger.engineConfig.cacheSizeGB)."),
		"term":       desc("repl_raft_term", "The Raft term this replica set member is in."),
		"primary":    desc("repl_primary", "1 when this member is the replica set's primary."),
		"leaders":    desc("repl_leader_changes_total", "New Raft leaders (primaries) this member saw elected since it started."),
		"commitLat":  desc("repl_commit_latency_seconds", "On the primary: time from appending an oplog batch to its Raft log to applying it committed by a majority."),
		"lagEntries": desc("repl_member_lag_entries", "Raft log entries a member lacks (the primary reports every member, a secondary itself).", "member"),
		"lagSecs":    desc("repl_member_lag_seconds", "A member's optime behind the primary's, in whole seconds (reported by the primary).", "member"),
	}}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	s := &c.env.Stats
	gauge := func(name string, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.GaugeValue, v, labels...)
	}
	counter := func(name string, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.CounterValue, v, labels...)
	}
	gauge("conns", float64(s.ConnsCurrent.Load()))
	counter("connsTotal", float64(s.ConnsTotal.Load()))
	for _, op := range []struct {
		name string
		v    int64
	}{{"insert", s.Insert.Load()}, {"query", s.Query.Load()}, {"update", s.Update.Load()}, {"delete", s.Delete.Load()}, {"getmore", s.GetMore.Load()}, {"command", s.Commands.Load()}} {
		counter("ops", float64(op.v), op.name)
	}
	counter("bytesIn", float64(s.BytesIn.Load()))
	counter("bytesOut", float64(s.BytesOut.Load()))
	counter("requests", float64(s.Requests.Load()))
	counter("returned", float64(s.DocsReturned.Load()))
	counter("docs", float64(s.Insert.Load()), "inserted")
	counter("docs", float64(s.DocsUpdated.Load()), "updated")
	counter("docs", float64(s.DocsDeleted.Load()), "deleted")
	gauge("cursors", float64(c.env.Cursors.Len()))
	counter("examined", float64(c.env.Counters.KeysExamined.Load()), "keys")
	counter("examined", float64(c.env.Counters.DocsExamined.Load()), "documents")
	counter("sorts", float64(c.env.Counters.ScanAndOrder.Load()))
	counter("maxTime", float64(s.MaxTimeExpired.Load()))
	counter("asserts", float64(s.RegularAsserts.Load()), "regular")
	counter("asserts", float64(s.UserAsserts.Load()), "user")
	counter("rejected", float64(s.ConnsRejected.Load()))
	gauge("wQueue", float64(s.WritersQueued.Load()))
	gauge("wActive", float64(s.WritersActive.Load()))
	counter("wWaits", float64(s.WriterWaits.Load()))
	counter("wWaitSecs", float64(s.WriterWaitMicros.Load())/1e6)
	st := c.env.KV.Stats()
	counter("commits", float64(st.Commits))
	counter("fsyncs", float64(st.JournalFsyncs))
	counter("fsyncSecs", st.JournalFsyncTime.Seconds())
	counter("jWritten", float64(st.JournalWritten))
	counter("jPayload", float64(st.JournalPayload))
	gauge("groupMax", float64(st.GroupCommitMax))
	counter("ckpts", float64(st.Checkpoints))
	counter("ckptPages", float64(st.CheckpointPages))
	gauge("dataBytes", float64(st.DataFileBytes))
	gauge("freePages", float64(st.FreePages))
	gauge("journalUse", float64(st.JournalBytes))
	gauge("cacheBytes", float64(st.CacheBytes))
	gauge("cacheMax", float64(st.CacheBudget))
	failed := 0.0
	if st.Failed != nil {
		failed = 1
	}
	gauge("failed", failed)
	c.collectRepl(ch)
}

// collectRepl adds the replication figures of a member of a set of
// several members (raftrepl.Metrics).
func (c *collector) collectRepl(ch chan<- prometheus.Metric) {
	n := c.env.Raft()
	if n == nil {
		return
	}
	applied, _ := c.env.Repl.Applied()
	m := n.Metrics(applied)
	ch <- prometheus.MustNewConstMetric(c.descs["term"], prometheus.GaugeValue, float64(m.Term))
	primary := 0.0
	if m.Primary {
		primary = 1
	}
	ch <- prometheus.MustNewConstMetric(c.descs["primary"], prometheus.GaugeValue, primary)
	ch <- prometheus.MustNewConstMetric(c.descs["leaders"], prometheus.CounterValue, float64(m.LeaderChanges))
	buckets := map[float64]uint64{}
	var cum uint64
	for i, b := range raftrepl.CommitBuckets {
		cum += m.CommitCounts[i]
		buckets[b.Seconds()] = cum
	}
	ch <- prometheus.MustNewConstHistogram(c.descs["commitLat"], m.Commits, m.CommitTotal.Seconds(), buckets)
	for _, ml := range m.Members {
		ch <- prometheus.MustNewConstMetric(c.descs["lagEntries"], prometheus.GaugeValue, float64(ml.Entries), ml.Host)
		if ml.HasSeconds {
			ch <- prometheus.MustNewConstMetric(c.descs["lagSecs"], prometheus.GaugeValue, float64(ml.Seconds), ml.Host)
		}
	}
}

// Serve exposes /metrics on addr until ctx ends. Command latencies are
// observed through env.ObserveLatency, which Serve installs.
func Serve(ctx context.Context, addr string, env *command.Env) (net.Addr, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(newCollector(env), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	lat := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "cairn_command_duration_seconds",
		Help:    "Command latency by class (reads, writes, commands), as serverStatus opLatencies.",
		Buckets: prometheus.ExponentialBuckets(50e-6, 4, 10),
	}, []string{"class"})
	reg.MustRegister(lat)
	classes := [3]prometheus.Observer{lat.WithLabelValues("reads"), lat.WithLabelValues("writes"), lat.WithLabelValues("commands")}
	env.ObserveLatency = func(class int, d time.Duration) { classes[class].Observe(d.Seconds()) }
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			env.Log.Error("Metrics endpoint failed", "c", "NETWORK", "ctx", "metrics", "error", err.Error())
		}
	}()
	return l.Addr(), nil
}
