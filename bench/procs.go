package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Sample is one timed run.
type Sample struct {
	Wall     time.Duration `json:"wall_ns"`
	MaxRSSKB int64         `json:"max_rss_kb"` // peak RSS of the measured process (VmHWM); 0 for in-process
	// RusageMaxRSSKB is wait4's ru_maxrss. On Linux it is at least the
	// harness's own peak RSS: Go starts children with vfork (CLONE_VM), and
	// exec folds the old mm's high-water mark — the parent's — into the
	// child's. Hence MaxRSSKB, polled from /proc.
	RusageMaxRSSKB int64         `json:"rusage_max_rss_kb"`
	ClientCPU      time.Duration `json:"client_cpu_ns"`
	ServerCPU      time.Duration `json:"server_cpu_ns"` // redis-server user+system CPU during the run
	OtherCPU       time.Duration `json:"other_cpu_ns"`  // CPU used by everything else on the machine meanwhile
	Keys           int64         `json:"keys"`
}

// runIdemctl runs the built idemctl with stdout to w (nil: /dev/null) and
// measures it.
func (h *harness) runIdemctl(ctx context.Context, w io.Writer, args ...string) (Sample, error) {
	return h.measure(ctx, w, h.bin, args...)
}

// runTool runs another program the same way.
func (h *harness) runTool(ctx context.Context, w io.Writer, name string, args ...string) (Sample, error) {
	return h.measure(ctx, w, name, args...)
}

func (h *harness) measure(ctx context.Context, w io.Writer, name string, args ...string) (Sample, error) {
	return h.measureEnv(ctx, w, h.env(), name, args...)
}

// measureEnv is measure with the child's environment given: on the
// clients' CPUs while a pinned step runs.
func (h *harness) measureEnv(ctx context.Context, w io.Writer, env []string, name string, args ...string) (Sample, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	if w == nil {
		if h.devnull == nil {
			f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			if err != nil {
				return Sample{}, err
			}
			h.devnull = f
		}
		cmd.Stdout = h.devnull // a file: the child writes to it directly
	} else {
		cmd.Stdout = w
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cpu0, busy0 := procCPU(h.srv.Pid()), busyCPU()
	start := time.Now()
	var err error
	if h.pinned != nil {
		err = h.pinned.start(cmd)
	} else {
		err = cmd.Start()
	}
	var hwm int64
	if err == nil {
		stop := make(chan struct{})
		polled := make(chan int64, 1)
		go func() { polled <- pollHWM(cmd.Process.Pid, stop) }()
		err = cmd.Wait()
		close(stop)
		hwm = <-polled
	}
	s := Sample{Wall: time.Since(start), ServerCPU: procCPU(h.srv.Pid()) - cpu0, MaxRSSKB: hwm}
	if ps := cmd.ProcessState; ps != nil {
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			s.RusageMaxRSSKB = ru.Maxrss // kilobytes on Linux
			s.ClientCPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	s.OtherCPU = max(busyCPU()-busy0-s.ServerCPU-s.ClientCPU, 0)
	if err != nil {
		return s, fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, tail(stderr.String(), 2000))
	}
	return s, nil
}

// hwmPoll is how often the child's VmHWM is read. VmHWM only grows, so the
// last read before exit misses at most this much of the run's end.
const hwmPoll = 5 * time.Millisecond

// pollHWM returns the largest VmHWM (peak RSS, kB) of pid seen until stop.
func pollHWM(pid int, stop <-chan struct{}) int64 {
	path := "/proc/" + strconv.Itoa(pid) + "/status"
	var peak int64
	t := time.NewTicker(hwmPoll)
	defer t.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil {
			peak = max(peak, statusKB(b, "VmHWM:"))
		}
		select {
		case <-stop:
			return peak
		case <-t.C:
		}
	}
}

// statusKB reads a "Name:   123 kB" line of /proc/PID/status (0: none).
func statusKB(status []byte, name string) int64 {
	_, rest, ok := bytes.Cut(status, []byte(name))
	if !ok {
		return 0
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseInt(f[0], 10, 64)
	return v
}

// clkTck is USER_HZ, the unit of /proc/PID/stat times (100 on Linux).
const clkTck = 100

// procCPU is a process's user+system CPU time from /proc/PID/stat (0 when
// unavailable).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clkTck
}

// busyCPU is the machine's non-idle CPU time from /proc/stat, including
// time the hypervisor stole (0 when unavailable): what other processes and
// other guests took shows as busy time beyond the measured client's and the
// server's.
func busyCPU() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var busy int64
	for i, v := range f[1:9] { // user nice system idle iowait irq softirq steal
		if i == 3 || i == 4 {
			continue
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		busy += n
	}
	return time.Duration(busy) * time.Second / clkTck
}

// loadAvg is the 1-minute load average.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}
