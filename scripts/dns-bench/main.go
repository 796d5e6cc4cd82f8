// Command dns-bench sends one DNS question over UDP from N clients, each with its own socket
// and one query in flight (send, wait for the answer, send the next), as stub resolvers do,
// and prints the rate, latency percentiles and CPU costs as one JSON line.
//
//	dns-bench -server 127.0.0.1:5353 -name dc1.samdom.example.com -type A -conc 8 \
//	    -duration 10s -warmup 1s [-label kauri] [-test a] [-server-pid PID] [-edns]
//
// The first answer (taken before the warm-up) is the reference: it must be NOERROR with at
// least one answer record, and every later answer must be the same bytes apart from the id
// (the servers measured serve static data). Answers that differ count as "answer_changed",
// other failures as "rcode_NAME", "timeout", "short", "truncated" or "send". Standard
// library only.
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

var types = map[string]uint16{"A": 1, "NS": 2, "CNAME": 5, "SOA": 6, "PTR": 12, "MX": 15,
	"TXT": 16, "AAAA": 28, "SRV": 33, "ANY": 255}

var rcodes = []string{"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED",
	"YXDOMAIN", "YXRRSET", "NXRRSET", "NOTAUTH", "NOTZONE"}

// query builds a question with the RD bit set (stub resolvers set it) and, with edns, an
// OPT record offering 1232 bytes.
func query(name string, qtype uint16, edns bool) ([]byte, error) {
	b := []byte{0, 0, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0}
	if edns {
		b[11] = 1
	}
	for _, l := range strings.Split(strings.TrimSuffix(name, "."), ".") {
		if l == "" || len(l) > 63 {
			return nil, fmt.Errorf("bad name %q", name)
		}
		b = append(b, byte(len(l)))
		b = append(b, l...)
	}
	b = append(b, 0)
	b = binary.BigEndian.AppendUint16(b, qtype)
	b = binary.BigEndian.AppendUint16(b, 1)
	if edns {
		b = append(b, 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0)
	}
	return b, nil
}

type worker struct {
	conn *net.UDPConn
	q    []byte
	buf  []byte
	id   uint16
	lat  []uint32 // nanoseconds
	errs map[string]int
	// first error text
	first string
}

var errTimeout = errors.New("timeout")

// exchange sends one query and waits for the answer with its id; it returns the answer.
func (w *worker) exchange(timeout time.Duration) ([]byte, error) {
	w.id++
	binary.BigEndian.PutUint16(w.q, w.id)
	if _, err := w.conn.Write(w.q); err != nil {
		return nil, fmt.Errorf("send: %w", err)
	}
	deadline := time.Now().Add(timeout)
	w.conn.SetReadDeadline(deadline)
	for {
		n, err := w.conn.Read(w.buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return nil, errTimeout
			}
			return nil, err
		}
		if n >= 12 && binary.BigEndian.Uint16(w.buf) == w.id {
			return w.buf[:n], nil
		}
		// A late answer to a query that timed out: wait on.
	}
}

// classify returns "" for an answer equal to the reference, else the kind of failure.
func classify(ans, ref []byte) string {
	if len(ans) < 12 {
		return "short"
	}
	if ans[2]&0x02 != 0 {
		return "truncated"
	}
	if rc := int(ans[3] & 0x0f); rc != 0 {
		if rc < len(rcodes) {
			return "rcode_" + rcodes[rc]
		}
		return "rcode_" + strconv.Itoa(rc)
	}
	if ref != nil && !bytes.Equal(ans[2:], ref[2:]) {
		return "answer_changed"
	}
	return ""
}

func (w *worker) fail(kind string, detail string) {
	w.errs[kind]++
	if w.first == "" {
		w.first = kind + ": " + detail
	}
}

func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return u + k, nil
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func round(v float64, digits int) float64 {
	p, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', digits, 64), 64)
	return p
}

func main() {
	server := flag.String("server", "127.0.0.1:53", "server address")
	name := flag.String("name", "", "name to ask for")
	qtype := flag.String("type", "A", "record type")
	conc := flag.Int("conc", 1, "clients, each with its own socket and one query in flight")
	duration := flag.Duration("duration", 10*time.Second, "measured time")
	warmup := flag.Duration("warmup", time.Second, "time before measuring (not counted)")
	timeout := flag.Duration("timeout", 2*time.Second, "how long to wait for an answer")
	edns := flag.Bool("edns", false, "send an OPT record (EDNS0, 1232-byte buffer)")
	label := flag.String("label", "server", "server label in the output")
	test := flag.String("test", "", "test label in the output (default: the type in lower case)")
	pid := flag.Int("server-pid", 0, "server process, for its CPU time per query")
	flag.Parse()
	if *name == "" {
		fmt.Fprintln(os.Stderr, "dns-bench: -name is required")
		os.Exit(2)
	}
	t, ok := types[strings.ToUpper(*qtype)]
	if !ok {
		fmt.Fprintln(os.Stderr, "dns-bench: unknown type", *qtype)
		os.Exit(2)
	}
	if *test == "" {
		*test = strings.ToLower(*qtype)
	}
	q, err := query(*name, t, *edns)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dns-bench:", err)
		os.Exit(2)
	}
	raddr, err := net.ResolveUDPAddr("udp", *server)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dns-bench:", err)
		os.Exit(2)
	}

	workers := make([]*worker, *conc)
	for i := range workers {
		c, err := net.DialUDP("udp", nil, raddr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "dns-bench:", err)
			os.Exit(1)
		}
		defer c.Close()
		workers[i] = &worker{conn: c, q: slices.Clone(q), buf: make([]byte, 65535),
			id: uint16(rand.IntN(65536)), errs: map[string]int{}}
	}

	// The reference answer.
	refAns, err := workers[0].exchange(*timeout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "dns-bench: %s %s at %s: %v\n", *name, *qtype, *server, err)
		os.Exit(1)
	}
	ref := slices.Clone(refAns)
	if kind := classify(ref, nil); kind != "" || binary.BigEndian.Uint16(ref[6:]) == 0 {
		if kind == "" {
			kind = "no answer records"
		}
		fmt.Fprintf(os.Stderr, "dns-bench: %s %s at %s: %s\n", *name, *qtype, *server, kind)
		os.Exit(1)
	}

	run := func(d time.Duration, keep bool) {
		var wg sync.WaitGroup
		end := time.Now().Add(d)
		for _, w := range workers {
			wg.Add(1)
			go func(w *worker) {
				defer wg.Done()
				for {
					t0 := time.Now()
					if !t0.Before(end) {
						return
					}
					ans, err := w.exchange(*timeout)
					t1 := time.Now()
					if !keep {
						continue
					}
					if t1.After(end) {
						// Finished after the measured time: not counted either way.
						return
					}
					if err != nil {
						kind := "send"
						if err == errTimeout {
							kind = "timeout"
						}
						w.fail(kind, err.Error())
						continue
					}
					if kind := classify(ans, ref); kind != "" {
						w.fail(kind, fmt.Sprintf("%x", ans))
						continue
					}
					w.lat = append(w.lat, uint32(t1.Sub(t0)))
				}
			}(w)
		}
		wg.Wait()
	}
	if *warmup > 0 {
		run(*warmup, false)
	}
	for _, w := range workers {
		w.lat = make([]uint32, 0, 1<<16)
	}
	var c0, c1 int64 = -1, -1
	if *pid > 0 {
		c0, _ = cpuTicks(*pid)
	}
	cpu0 := selfCPU()
	start := time.Now()
	run(*duration, true)
	elapsed := time.Since(start)
	cpu := selfCPU() - cpu0
	if *pid > 0 {
		c1, _ = cpuTicks(*pid)
	}

	var lat []uint32
	errs := map[string]int{}
	first := ""
	for _, w := range workers {
		lat = append(lat, w.lat...)
		for k, v := range w.errs {
			if v > 0 {
				errs[k] += v
			}
		}
		if first == "" {
			first = w.first
		}
	}
	slices.Sort(lat)
	n := len(lat)
	ms := func(ns uint32) float64 { return round(float64(ns)/1e6, 3) }
	pct := func(p float64) any {
		if n == 0 {
			return nil
		}
		k := int(p/100*float64(n)+0.5) - 1
		k = max(0, min(n-1, k))
		return ms(lat[k])
	}
	var sum float64
	for _, v := range lat {
		sum += float64(v)
	}
	out := map[string]any{
		"server":         *label,
		"test":           *test,
		"question":       *name + " " + strings.ToUpper(*qtype),
		"conc":           *conc,
		"client":         "dns-bench (Go), one query in flight per socket",
		"transport":      "udp",
		"edns":           *edns,
		"duration_s":     round(elapsed.Seconds(), 3),
		"ok":             n,
		"qps":            round(float64(n)/elapsed.Seconds(), 1),
		"errors":         errs,
		"lat_mean_ms":    nil,
		"lat_p50_ms":     pct(50),
		"lat_p99_ms":     pct(99),
		"lat_p999_ms":    pct(99.9),
		"lat_max_ms":     nil,
		"request_bytes":  len(q),
		"response_bytes": len(ref),
		"answer_records": binary.BigEndian.Uint16(ref[6:]),
		"authority":      binary.BigEndian.Uint16(ref[8:]),
		"additional":     binary.BigEndian.Uint16(ref[10:]),
		"aa":             ref[2]&0x04 != 0,
	}
	if n > 0 {
		out["lat_mean_ms"] = round(sum/float64(n)/1e6, 3)
		out["lat_max_ms"] = ms(lat[n-1])
		out["client_cpu_us_per_op"] = round(float64(cpu.Microseconds())/float64(n), 1)
		if c0 >= 0 && c1 >= 0 {
			// /proc counts in clock ticks, 100 per second on Linux.
			out["server_cpu_us_per_op"] = round(float64(c1-c0)*1e4/float64(n), 1)
		}
	}
	if first != "" {
		out["first_error"] = first
	}
	j, _ := json.Marshal(out)
	fmt.Println(string(j))
	if n == 0 {
		os.Exit(1)
	}
}
