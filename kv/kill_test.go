package kv

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The kill -9 test re-executes the test binary as a child process that
// commits durably from several goroutines and prints "ACK <writer> <n>"
// after each commit returns. The parent SIGKILLs it at a random moment,
// reopens the database and checks that every acknowledged commit is there
// and that every transaction is all-or-nothing.

const killEnv = "KV_KILL_CHILD_DIR"

const killWriters = 4

func TestKillChild(t *testing.T) {
	dir := os.Getenv(killEnv)
	if dir == "" {
		t.Skip("child process of TestKill9")
	}
	db, err := Open(dir, &Options{JournalSize: 1 << 20, PageSize: 4096})
	if err != nil {
		fmt.Printf("ERR open: %v\n", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for w := 0; w < killWriters; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Continue after the last committed number of this writer.
			next := 0
			db.View(func(tx *Tx) error {
				tr, err := tx.Tree(fmt.Sprintf("w%d", w))
				if err != nil {
					return nil
				}
				next = int(tr.Len() / 3)
				return nil
			})
			for n := next; ; n++ {
				err := db.Update(context.Background(), func(tx *Tx) error {
					tr, err := tx.CreateTreeIfNotExists(fmt.Sprintf("w%d", w))
					if err != nil {
						return err
					}
					for part := 0; part < 3; part++ {
						if err := tr.Put([]byte(fmt.Sprintf("%08d-%d", n, part)), []byte(strings.Repeat("v", 10+n%300))); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					fmt.Printf("ERR commit: %v\n", err)
					os.Exit(2)
				}
				mu.Lock()
				fmt.Fprintf(out, "ACK %d %d\n", w, n)
				out.Flush()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

func TestKill9(t *testing.T) {
	if os.Getenv(killEnv) != "" {
		t.Skip("in child")
	}
	budget := 3 * time.Second
	if *flagLong {
		budget = 60 * time.Second
	}
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 7))
	dir := t.TempDir()
	acked := make([]int, killWriters)
	for i := range acked {
		acked[i] = -1
	}
	deadline := time.Now().Add(budget)
	cycles := 0
	for time.Now().Before(deadline) || cycles < 3 {
		cycles++
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), killEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		killAt := time.After(time.Duration(5+rng.IntN(250)) * time.Millisecond)
		killed := false
		for !killed {
			select {
			case <-killAt:
				cmd.Process.Signal(syscall.SIGKILL)
				killed = true
			case l, ok := <-lines:
				if !ok {
					killed = true
					break
				}
				f := strings.Fields(l)
				if len(f) == 3 && f[0] == "ACK" {
					w, _ := strconv.Atoi(f[1])
					n, _ := strconv.Atoi(f[2])
					acked[w] = max(acked[w], n)
				} else if strings.HasPrefix(l, "ERR") {
					t.Fatalf("child: %s", l)
				}
			}
		}
		// Drain what the child printed before it died.
		for l := range lines {
			f := strings.Fields(l)
			if len(f) == 3 && f[0] == "ACK" {
				w, _ := strconv.Atoi(f[1])
				n, _ := strconv.Atoi(f[2])
				acked[w] = max(acked[w], n)
			}
		}
		cmd.Wait()

		db, err := Open(dir, &Options{JournalSize: 1 << 20, PageSize: 4096})
		if err != nil {
			t.Fatalf("cycle %d: reopen: %v", cycles, err)
		}
		err = db.View(func(tx *Tx) error {
			for w := 0; w < killWriters; w++ {
				tr, err := tx.Tree(fmt.Sprintf("w%d", w))
				if err != nil {
					if acked[w] < 0 {
						continue
					}
					return fmt.Errorf("writer %d acked %d but tree missing: %w", w, acked[w], err)
				}
				if tr.Len()%3 != 0 {
					return fmt.Errorf("writer %d: %d keys, a transaction is partly present", w, tr.Len())
				}
				have := int(tr.Len()/3) - 1
				if have < acked[w] {
					return fmt.Errorf("writer %d: acknowledged commit %d lost (have up to %d)", w, acked[w], have)
				}
				for n := 0; n <= have; n++ {
					for part := 0; part < 3; part++ {
						if v, err := tr.Get([]byte(fmt.Sprintf("%08d-%d", n, part))); err != nil || v == nil {
							return fmt.Errorf("writer %d: commit %d part %d missing (%v)", w, n, part, err)
						}
					}
				}
				acked[w] = have
			}
			return nil
		})
		if err == nil {
			err = db.Check(context.Background())
		}
		db.Close()
		if err != nil {
			t.Fatalf("cycle %d: %v", cycles, err)
		}
	}
	t.Logf("%d kill cycles, acknowledged commits per writer %v", cycles, acked)
}
