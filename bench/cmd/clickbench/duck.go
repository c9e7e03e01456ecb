package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2" // the duckdb database/sql driver
)

// DuckDB is the embedded columnar peer (-duckdb): it loads the same
// generated TSV into a database file in the working directory and runs
// ClickBench's DuckDB SQL (duckdb/queries.sql in ClickBench) with as many
// threads as the server has cores, each query -runs times, timing wall
// and this process's CPU (DuckDB runs inside it; the Cairn server is idle
// meanwhile). The SQL reads Refresh where ClickBench's reads IsRefresh:
// the generator's IsRefresh equals it (see -isrefresh).

// duckQueries are ClickBench's 43 queries in DuckDB's dialect.
var duckQueries = []string{
	/* Q0 */ `SELECT COUNT(*) FROM hits`,
	/* Q1 */ `SELECT COUNT(*) FROM hits WHERE AdvEngineID <> 0`,
	/* Q2 */ `SELECT SUM(AdvEngineID), COUNT(*), AVG(ResolutionWidth) FROM hits`,
	/* Q3 */ `SELECT AVG(UserID) FROM hits`,
	/* Q4 */ `SELECT COUNT(DISTINCT UserID) FROM hits`,
	/* Q5 */ `SELECT COUNT(DISTINCT SearchPhrase) FROM hits`,
	/* Q6 */ `SELECT MIN(EventDate), MAX(EventDate) FROM hits`,
	/* Q7 */ `SELECT AdvEngineID, COUNT(*) FROM hits WHERE AdvEngineID <> 0 GROUP BY AdvEngineID ORDER BY COUNT(*) DESC`,
	/* Q8 */ `SELECT RegionID, COUNT(DISTINCT UserID) AS u FROM hits GROUP BY RegionID ORDER BY u DESC LIMIT 10`,
	/* Q9 */ `SELECT RegionID, SUM(AdvEngineID), COUNT(*) AS c, AVG(ResolutionWidth), COUNT(DISTINCT UserID) FROM hits GROUP BY RegionID ORDER BY c DESC LIMIT 10`,
	/* Q10 */ `SELECT MobilePhoneModel, COUNT(DISTINCT UserID) AS u FROM hits WHERE MobilePhoneModel <> '' GROUP BY MobilePhoneModel ORDER BY u DESC LIMIT 10`,
	/* Q11 */ `SELECT MobilePhone, MobilePhoneModel, COUNT(DISTINCT UserID) AS u FROM hits WHERE MobilePhoneModel <> '' GROUP BY MobilePhone, MobilePhoneModel ORDER BY u DESC LIMIT 10`,
	/* Q12 */ `SELECT SearchPhrase, COUNT(*) AS c FROM hits WHERE SearchPhrase <> '' GROUP BY SearchPhrase ORDER BY c DESC LIMIT 10`,
	/* Q13 */ `SELECT SearchPhrase, COUNT(DISTINCT UserID) AS u FROM hits WHERE SearchPhrase <> '' GROUP BY SearchPhrase ORDER BY u DESC LIMIT 10`,
	/* Q14 */ `SELECT SearchEngineID, SearchPhrase, COUNT(*) AS c FROM hits WHERE SearchPhrase <> '' GROUP BY SearchEngineID, SearchPhrase ORDER BY c DESC LIMIT 10`,
	/* Q15 */ `SELECT UserID, COUNT(*) FROM hits GROUP BY UserID ORDER BY COUNT(*) DESC LIMIT 10`,
	/* Q16 */ `SELECT UserID, SearchPhrase, COUNT(*) FROM hits GROUP BY UserID, SearchPhrase ORDER BY COUNT(*) DESC LIMIT 10`,
	/* Q17 */ `SELECT UserID, SearchPhrase, COUNT(*) FROM hits GROUP BY UserID, SearchPhrase LIMIT 10`,
	/* Q18 */ `SELECT UserID, extract(minute FROM EventTime) AS m, SearchPhrase, COUNT(*) FROM hits GROUP BY UserID, m, SearchPhrase ORDER BY COUNT(*) DESC LIMIT 10`,
	/* Q19 */ `SELECT UserID FROM hits WHERE UserID = 435090932899640449`,
	/* Q20 */ `SELECT COUNT(*) FROM hits WHERE URL LIKE '%google%'`,
	/* Q21 */ `SELECT SearchPhrase, MIN(URL), COUNT(*) AS c FROM hits WHERE URL LIKE '%google%' AND SearchPhrase <> '' GROUP BY SearchPhrase ORDER BY c DESC LIMIT 10`,
	/* Q22 */ `SELECT SearchPhrase, MIN(URL), MIN(Title), COUNT(*) AS c, COUNT(DISTINCT UserID) FROM hits WHERE Title LIKE '%Google%' AND URL NOT LIKE '%.google.%' AND SearchPhrase <> '' GROUP BY SearchPhrase ORDER BY c DESC LIMIT 10`,
	/* Q23 */ `SELECT * FROM hits WHERE URL LIKE '%google%' ORDER BY EventTime LIMIT 10`,
	/* Q24 */ `SELECT SearchPhrase FROM hits WHERE SearchPhrase <> '' ORDER BY EventTime LIMIT 10`,
	/* Q25 */ `SELECT SearchPhrase FROM hits WHERE SearchPhrase <> '' ORDER BY SearchPhrase LIMIT 10`,
	/* Q26 */ `SELECT SearchPhrase FROM hits WHERE SearchPhrase <> '' ORDER BY EventTime, SearchPhrase LIMIT 10`,
	/* Q27 */ `SELECT CounterID, AVG(length(URL)) AS l, COUNT(*) AS c FROM hits WHERE URL <> '' GROUP BY CounterID HAVING COUNT(*) > 100000 ORDER BY l DESC LIMIT 25`,
	/* Q28 */ `SELECT REGEXP_REPLACE(Referer, '^https?://(?:www\.)?([^/]+)/.*$', '\1') AS k, AVG(length(Referer)) AS l, COUNT(*) AS c, MIN(Referer) FROM hits WHERE Referer <> '' GROUP BY k HAVING COUNT(*) > 100000 ORDER BY l DESC LIMIT 25`,
	/* Q29 */ "", // sumsQuery
	/* Q30 */ `SELECT SearchEngineID, ClientIP, COUNT(*) AS c, SUM(Refresh), AVG(ResolutionWidth) FROM hits WHERE SearchPhrase <> '' GROUP BY SearchEngineID, ClientIP ORDER BY c DESC LIMIT 10`,
	/* Q31 */ `SELECT WatchID, ClientIP, COUNT(*) AS c, SUM(Refresh), AVG(ResolutionWidth) FROM hits WHERE SearchPhrase <> '' GROUP BY WatchID, ClientIP ORDER BY c DESC LIMIT 10`,
	/* Q32 */ `SELECT WatchID, ClientIP, COUNT(*) AS c, SUM(Refresh), AVG(ResolutionWidth) FROM hits GROUP BY WatchID, ClientIP ORDER BY c DESC LIMIT 10`,
	/* Q33 */ `SELECT URL, COUNT(*) AS c FROM hits GROUP BY URL ORDER BY c DESC LIMIT 10`,
	/* Q34 */ `SELECT 1, URL, COUNT(*) AS c FROM hits GROUP BY 1, URL ORDER BY c DESC LIMIT 10`,
	/* Q35 */ `SELECT ClientIP, ClientIP - 1, ClientIP - 2, ClientIP - 3, COUNT(*) AS c FROM hits GROUP BY ClientIP, ClientIP - 1, ClientIP - 2, ClientIP - 3 ORDER BY c DESC LIMIT 10`,
	/* Q36 */ `SELECT URL, COUNT(*) AS PageViews FROM hits WHERE CounterID = 62 AND EventDate >= '2013-07-01' AND EventDate <= '2013-07-31' AND DontCountHits = 0 AND Refresh = 0 AND URL <> '' GROUP BY URL ORDER BY PageViews DESC LIMIT 10`,
	/* Q37 */ `SELECT Title, COUNT(*) AS PageViews FROM hits WHERE CounterID = 62 AND EventDate >= '2013-07-01' AND EventDate <= '2013-07-31' AND DontCountHits = 0 AND Refresh = 0 AND Title <> '' GROUP BY Title ORDER BY PageViews DESC LIMIT 10`,
	/* Q38 */ `SELECT URL, COUNT(*) AS PageViews FROM hits WHERE CounterID = 62 AND EventDate >= '2013-07-01' AND EventDate <= '2013-07-31' AND Refresh = 0 AND IsLink <> 0 AND IsDownload = 0 GROUP BY URL ORDER BY PageViews DESC LIMIT 10 OFFSET 1000`,
	/* Q39 */ `SELECT TraficSourceID, SearchEngineID, AdvEngineID, CASE WHEN (SearchEngineID = 0 AND AdvEngineID = 0) THEN Referer ELSE '' END AS Src, URL AS Dst, COUNT(*) AS PageViews FROM hits WHERE CounterID = 62 AND EventDate >= '2013-07-01' AND EventDate <= '2013-07-31' AND Refresh = 0 GROUP BY TraficSourceID, SearchEngineID, AdvEngineID, Src, Dst ORDER BY PageViews DESC LIMIT 10 OFFSET 1000`,
	/* Q40 */ `SELECT URLHash, EventDate, COUNT(*) AS PageViews FROM hits WHERE CounterID = 62 AND EventDate >= '2013-07-01' AND EventDate <= '2013-07-31' AND Refresh = 0 AND TraficSourceID IN (-1, 6) AND RefererHash = 3594120000172545465 GROUP BY URLHash, EventDate ORDER BY PageViews DESC LIMIT 10 OFFSET 100`,
	/* Q41 */ `SELECT WindowClientWidth, WindowClientHeight, COUNT(*) AS PageViews FROM hits WHERE CounterID = 62 AND EventDate >= '2013-07-01' AND EventDate <= '2013-07-31' AND Refresh = 0 AND DontCountHits = 0 AND URLHash = 2868770270353813622 GROUP BY WindowClientWidth, WindowClientHeight ORDER BY PageViews DESC LIMIT 10 OFFSET 10000`,
	/* Q42 */ `SELECT DATE_TRUNC('minute', EventTime) AS M, COUNT(*) AS PageViews FROM hits WHERE CounterID = 62 AND EventDate >= '2013-07-14' AND EventDate <= '2013-07-15' AND Refresh = 0 AND DontCountHits = 0 GROUP BY DATE_TRUNC('minute', EventTime) ORDER BY DATE_TRUNC('minute', EventTime) LIMIT 10 OFFSET 1000`,
}

// sumsQuery is Q29: SUM(ResolutionWidth), SUM(ResolutionWidth + 1), ...
// up to + 89.
func sumsQuery() string {
	var b strings.Builder
	b.WriteString("SELECT SUM(ResolutionWidth)")
	for i := 1; i < 90; i++ {
		fmt.Fprintf(&b, ", SUM(ResolutionWidth + %d)", i)
	}
	b.WriteString(" FROM hits")
	return b.String()
}

// duckPeer is the loaded DuckDB database.
type duckPeer struct {
	db      *sql.DB
	path    string
	version string
}

// loadDuck creates DIR/duck.db and loads the TSV into hits with the
// generator's column types, using threads threads.
func loadDuck(ctx context.Context, dir, tsv string, isRefresh bool, threads int, rep *report) (*duckPeer, error) {
	path := filepath.Join(dir, "duck.db")
	os.Remove(path)
	os.Remove(path + ".wal")
	db, err := sql.Open("duckdb", path)
	if err != nil {
		return nil, fmt.Errorf("duckdb: %w", err)
	}
	db.SetMaxOpenConns(1)
	p := &duckPeer{db: db, path: path}
	if err := db.QueryRowContext(ctx, "SELECT version()").Scan(&p.version); err != nil {
		db.Close()
		return nil, fmt.Errorf("duckdb: %w", err)
	}
	if _, err := db.ExecContext(ctx, fmt.Sprintf("SET threads = %d", threads)); err != nil {
		db.Close()
		return nil, fmt.Errorf("duckdb: %w", err)
	}
	cols := columns
	if isRefresh {
		cols = append(cols[:len(cols):len(cols)], isRefreshColumn)
	}
	var def, csvCols []string
	for _, c := range cols {
		t := map[kind]string{kInt32: "INTEGER", kInt64: "BIGINT", kString: "TEXT", kDate: "DATE", kDateTime: "TIMESTAMP"}[c.kind]
		def = append(def, c.name+" "+t)
		csvCols = append(csvCols, fmt.Sprintf("'%s': '%s'", c.name, t))
	}
	t0, c0 := time.Now(), cpuTime()
	if _, err := db.ExecContext(ctx, "CREATE TABLE hits ("+strings.Join(def, ", ")+")"); err != nil {
		db.Close()
		return nil, fmt.Errorf("duckdb: create table: %w", err)
	}
	load := fmt.Sprintf("INSERT INTO hits SELECT * FROM read_csv('%s', delim = '\t', header = false, quote = '', escape = '', columns = {%s})", tsv, strings.Join(csvCols, ", "))
	if _, err := db.ExecContext(ctx, load); err != nil {
		db.Close()
		return nil, fmt.Errorf("duckdb: load: %w", err)
	}
	if _, err := db.ExecContext(ctx, "CHECKPOINT"); err != nil {
		db.Close()
		return nil, fmt.Errorf("duckdb: checkpoint: %w", err)
	}
	rep.DuckLoadSeconds, rep.DuckLoadCPU = time.Since(t0).Seconds(), cpuTime()-c0
	var n int64
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM hits").Scan(&n); err != nil {
		db.Close()
		return nil, err
	}
	if fi, err := os.Stat(path); err == nil {
		rep.DuckFileBytes = fi.Size()
	}
	rep.DuckVersion, rep.DuckThreads = p.version, threads
	fmt.Printf("duckdb %s: loaded %d rows in %.1f s (cpu %.1f s), file %.1f MiB\n", p.version, n, rep.DuckLoadSeconds, rep.DuckLoadCPU, float64(rep.DuckFileBytes)/(1<<20))
	return p, nil
}

// run runs each selected query c.runs times, reading every result row.
func (p *duckPeer) run(ctx context.Context, c *config, rep *report) error {
	for _, q := range c.queries {
		text := duckQueries[q]
		if q == 29 {
			text = sumsQuery()
		}
		res := queryResult{Query: q}
		for range c.runs {
			t0, c0 := time.Now(), cpuTime()
			err := p.query(ctx, text)
			d := time.Since(t0).Seconds()
			res.CPU = append(res.CPU, cpuTime()-c0)
			if err != nil {
				res.Error = err.Error()
				res.Times = append(res.Times, -1)
				break
			}
			res.Times = append(res.Times, d)
		}
		rep.Duck = append(rep.Duck, res)
		fmt.Println("duckdb " + res.line())
	}
	return nil
}

func (p *duckPeer) query(ctx context.Context, text string) error {
	rows, err := p.db.QueryContext(ctx, text)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (p *duckPeer) close() { p.db.Close() }
