package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Operation types, as YCSB names them in its report.
const (
	opRead = iota
	opUpdate
	opInsert
	opScan
	opRMW
	opPing
	numOps
)

var opNames = [numOps]string{"READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE", "PING"}

// workload is one of YCSB's core workloads (workloads/workloada..f): the
// operation mix and the request distribution. Every workload reads all
// fields (readallfields=true) and updates one (writeallfields=false).
type workload struct {
	name         string
	proportions  [numOps]float64
	distribution string // zipfian, uniform, latest, hotspot
	maxScanLen   int64  // scans: uniform length in [1, maxScanLen]
}

// coreWorkloads are YCSB's workloads A–F, plus "ping" (no data: the round
// trip ceiling of the same client).
var coreWorkloads = map[string]workload{
	"a":    {name: "a", proportions: mix(map[int]float64{opRead: 0.5, opUpdate: 0.5}), distribution: "zipfian"},
	"b":    {name: "b", proportions: mix(map[int]float64{opRead: 0.95, opUpdate: 0.05}), distribution: "zipfian"},
	"c":    {name: "c", proportions: mix(map[int]float64{opRead: 1}), distribution: "zipfian"},
	"d":    {name: "d", proportions: mix(map[int]float64{opRead: 0.95, opInsert: 0.05}), distribution: "latest"},
	"e":    {name: "e", proportions: mix(map[int]float64{opScan: 0.95, opInsert: 0.05}), distribution: "zipfian", maxScanLen: 100},
	"f":    {name: "f", proportions: mix(map[int]float64{opRead: 0.5, opRMW: 0.5}), distribution: "zipfian"},
	"ping": {name: "ping", proportions: mix(map[int]float64{opPing: 1})},
}

func mix(m map[int]float64) (p [numOps]float64) {
	for op, v := range m {
		p[op] = v
	}
	return p
}

// Record layout: YCSB's defaults, fieldcount 10 × fieldlength 100, field
// names field0..field9.
const (
	fieldCount  = 10
	fieldLength = 100
)

var fieldNames = func() (n [fieldCount]string) {
	for i := range n {
		n[i] = "field" + strconv.Itoa(i)
	}
	return n
}()

// keyName is YCSB's CoreWorkload.buildKeyName with insertorder=hashed and
// zeropadding=1: "user" followed by the FNV hash of the key number.
func keyName(n int64) string {
	return "user" + strconv.FormatInt(fnvHash64(n), 10)
}

// randomValue fills b as YCSB's RandomByteIterator does: printable ASCII
// characters (' ' + 0..94).
func randomValue(b []byte, rng *rand.Rand) {
	for i := range b {
		b[i] = byte(' ' + rng.IntN(95))
	}
}

// chooser picks operations with the workload's proportions (YCSB's
// DiscreteGenerator).
type chooser struct {
	cum [numOps]float64
}

func newChooser(p [numOps]float64) chooser {
	var c chooser
	sum := 0.0
	for i, v := range p {
		sum += v
		c.cum[i] = sum
	}
	for i := range c.cum {
		c.cum[i] /= sum
	}
	return c
}

func (c *chooser) next(rng *rand.Rand) int {
	u := rng.Float64()
	for i, v := range c.cum {
		if u < v {
			return i
		}
	}
	return numOps - 1
}

// newKeyChooser builds the workload's request distribution over the
// records [0, records), as CoreWorkload does: the zipfian key space is
// enlarged by twice the expected inserts, and keys not yet inserted are
// drawn again (see nextKey).
func newKeyChooser(w workload, records, opCount int64, ins *ackCounter, rng *rand.Rand) (keyChooser, error) {
	switch w.distribution {
	case "zipfian":
		expectedNew := int64(float64(opCount) * w.proportions[opInsert] * 2)
		return newScrambledZipfian(0, records+expectedNew, rng), nil
	case "uniform":
		return &uniform{lo: 0, hi: records - 1, rng: rng}, nil
	case "latest":
		return newSkewedLatest(ins, rng), nil
	case "hotspot":
		return newHotspot(0, records-1, 0.2, 0.8, rng), nil
	}
	return nil, fmt.Errorf("unknown request distribution %q", w.distribution)
}

// parseWorkloads reads a comma-separated list of workload names.
func parseWorkloads(s string) ([]workload, error) {
	var out []workload
	for _, n := range strings.Split(s, ",") {
		w, ok := coreWorkloads[strings.ToLower(strings.TrimPrefix(strings.TrimSpace(n), "workload"))]
		if !ok {
			return nil, fmt.Errorf("unknown workload %q (a-f or ping)", n)
		}
		out = append(out, w)
	}
	return out, nil
}
