package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The round-trip floor: a minimal Go server that answers every
// length-prefixed message with a fixed reply, and a minimal client that
// sends the bytes of a driver's ping and reads whole replies. Both read
// through a bufio.Reader (one read per message when nothing else is
// queued) and write each message with one write, as cairnd does; neither
// parses anything. The same client against cairnd ("raw ping") isolates
// the server's cost from the driver's.

// pingRequest is an OP_MSG {ping: 1, lsid: {id: <UUID>}, $db: "admin"},
// the body a driver sends for ping on a session-capable server.
func pingRequest() []byte {
	var body []byte
	body = append(body, 0, 0, 0, 0)
	body = append(body, 0x10)
	body = append(body, "ping\x00"...)
	body = binary.LittleEndian.AppendUint32(body, 1)
	// lsid: {id: BinData(4, 16 bytes)}
	body = append(body, 0x03)
	body = append(body, "lsid\x00"...)
	sub := []byte{0, 0, 0, 0, 0x05}
	sub = append(sub, "id\x00"...)
	sub = binary.LittleEndian.AppendUint32(sub, 16)
	sub = append(sub, 4)
	sub = append(sub, make([]byte, 16)...)
	sub = append(sub, 0)
	binary.LittleEndian.PutUint32(sub, uint32(len(sub)))
	body = append(body, sub...)
	body = append(body, 0x02)
	body = append(body, "$db\x00"...)
	body = binary.LittleEndian.AppendUint32(body, 6)
	body = append(body, "admin\x00"...)
	body = append(body, 0)
	binary.LittleEndian.PutUint32(body, uint32(len(body)))
	return opMsg(1, 0, body)
}

// opMsg frames body as an OP_MSG (opcode 2013, flags 0, section kind 0).
func opMsg(id, responseTo int32, body []byte) []byte {
	m := make([]byte, 16, 16+5+len(body))
	binary.LittleEndian.PutUint32(m[4:], uint32(id))
	binary.LittleEndian.PutUint32(m[8:], uint32(responseTo))
	binary.LittleEndian.PutUint32(m[12:], 2013)
	m = append(m, 0, 0, 0, 0, 0)
	m = append(m, body...)
	binary.LittleEndian.PutUint32(m, uint32(len(m)))
	return m
}

// readMsg reads one length-prefixed message into buf.
func readMsg(r *bufio.Reader, buf []byte) ([]byte, error) {
	if _, err := io.ReadFull(r, buf[:4]); err != nil {
		return nil, err
	}
	n := int(binary.LittleEndian.Uint32(buf))
	if n < 16 || n > 48<<20 {
		return nil, fmt.Errorf("message length %d", n)
	}
	if cap(buf) < n {
		nb := make([]byte, n)
		copy(nb, buf[:4])
		buf = nb
	}
	buf = buf[:n]
	_, err := io.ReadFull(r, buf[4:])
	return buf, err
}

// serve runs the echo server: it prints its address, answers each message
// on each connection with a reply of replySize bytes, and exits when its
// standard input closes.
func serve(replySize int) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr().String())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	reply := make([]byte, replySize)
	binary.LittleEndian.PutUint32(reply, uint32(replySize))
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			r := bufio.NewReaderSize(c, 16<<10)
			buf := make([]byte, 4096)
			for {
				var err error
				if buf, err = readMsg(r, buf); err != nil {
					return
				}
				if _, err := c.Write(reply); err != nil {
					return
				}
			}
		}()
	}
}

// echoServer is a running echo server process.
type echoServer struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	addr  string
}

func startEcho(replySize int) (*echoServer, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "serve", "-reply", fmt.Sprint(replySize))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("echo server: %w", err)
	}
	return &echoServer{cmd: cmd, stdin: in, addr: addr[:len(addr)-1]}, nil
}

func (e *echoServer) stop() {
	e.stdin.Close()
	_ = e.cmd.Wait()
}

// replySize sends one ping to addr and returns the size of the reply.
func replySize(addr string) (int, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(pingRequest()); err != nil {
		return 0, err
	}
	m, err := readMsg(bufio.NewReader(c), make([]byte, 4096))
	if err != nil {
		return 0, err
	}
	return len(m), nil
}

// RawResult is one run of the minimal client.
type RawResult struct {
	Target     string  `json:"target"` // "echo" or "cairnd"
	Threads    int     `json:"threads"`
	Operations int64   `json:"operations"`
	Seconds    float64 `json:"seconds"`
	Throughput float64 `json:"ops_per_sec"`
	P50us      float64 `json:"p50_us"`
	P99us      float64 `json:"p99_us"`
}

// rawRun sends ping round trips from threads connections until ops are
// done or maxTime passes.
func rawRun(target, addr string, threads int, ops int64, maxTime time.Duration) (*RawResult, error) {
	req := pingRequest()
	conns := make([]net.Conn, threads)
	for i := range conns {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		conns[i] = c
	}
	var left atomic.Int64
	left.Store(ops)
	deadline := time.Now().Add(maxTime)
	lat := make([][]time.Duration, threads)
	errs := make([]error, threads)
	var wg sync.WaitGroup
	start := time.Now()
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := bufio.NewReaderSize(c, 16<<10)
			buf := make([]byte, 4096)
			for n := 0; left.Add(-1) >= 0; n++ {
				if n%64 == 0 && time.Now().After(deadline) {
					return
				}
				t := time.Now()
				if _, err := c.Write(req); err != nil {
					errs[i] = err
					return
				}
				var err error
				if buf, err = readMsg(r, buf); err != nil {
					errs[i] = err
					return
				}
				lat[i] = append(lat[i], time.Since(t))
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", target, err)
		}
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	res := &RawResult{Target: target, Threads: threads, Operations: int64(len(all)), Seconds: el.Seconds()}
	if len(all) > 0 {
		res.Throughput = float64(len(all)) / el.Seconds()
		res.P50us = float64(all[len(all)/2]) / 1e3
		res.P99us = float64(all[len(all)*99/100]) / 1e3
	}
	return res, nil
}
