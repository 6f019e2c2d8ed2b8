package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/idemctl/idemctl/inspect"
	"github.com/idemctl/idemctl/internal/testkit/redistest"
)

// staleBase is the stale count under the step's short timeout before the
// simulator runs, from one stats pass: every seeded processing record
// whose age is known.
func (f *followRun) staleBase(ctx context.Context) error {
	var out bytes.Buffer
	if _, err := f.h.runIdemctl(ctx, &out, f.args("stats", "--output", "json")...); err != nil {
		return err
	}
	var rep inspect.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || !rep.Complete {
		return fmt.Errorf("stats before the follow step: complete %v, %v", rep.Complete, err)
	}
	f.base = rep.Stale
	return nil
}

// args are the step's idemctl flags: the harness's, with its processing
// timeout.
func (f *followRun) args(cmd string, extra ...string) []string {
	return append([]string{cmd, "--url", f.h.srv.URL(0), "--preset", "atlasmart", "--reserve-ttl", reserveTTL.String(),
		"--processing-timeout", followTimeout.String(), "--retention", retention.String()}, extra...)
}

// scrape is one read of the exporter's /metrics.
type scrape struct {
	at    time.Time
	stale int64
	mode  string  // the follow mode the metrics name ("" none)
	view  float64 // idemctl_follow_view_bytes (0: none)
	done  bool    // a complete pass (or a live view) stands behind the counts
}

// mode runs the exporter in one mode beside the application, and
// measures its window once its first pass is complete.
func (f *followRun) mode(ctx context.Context, mode string, idle float64) (*FollowMode, error) {
	port, err := redistest.FreePort()
	if err != nil {
		return nil, err
	}
	flag := "--follow"
	if mode == "periodic" {
		flag = "--follow=false"
	}
	args := f.args("exporter", "--listen", "127.0.0.1:"+strconv.Itoa(port), flag)
	m := &FollowMode{Mode: mode, Command: "idemctl exporter " + flag}
	cmd := exec.CommandContext(ctx, f.h.bin, args...)
	cmd.Env = f.h.env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	defer stopProcess(cmd, exited)
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	limit := 5*time.Minute + time.Duration(f.h.cfg.N/20_000)*time.Second
	for {
		s, err := readMetrics(ctx, url)
		if err == nil && s.done {
			break
		}
		if time.Since(start) > limit || isClosed(exited) {
			return nil, fmt.Errorf("no complete pass after %v: %v\n%s", time.Since(start).Round(time.Second), err, tail(stderr.String(), 600))
		}
		if !sleepCtx(ctx, 200*time.Millisecond) {
			return nil, ctx.Err()
		}
	}
	m.FirstPass = time.Since(start)
	window := f.h.cfg.FollowWindow
	tailFor := 5 * time.Second
	if mode == "periodic" {
		tailFor = followInterval + 2*m.FirstPass
		window = max(window, 3*tailFor)
	}
	scrapes, phase, err := f.watch(ctx, url, window, idle)
	if err != nil {
		return nil, err
	}
	m.Phase, m.Scrapes = phase, len(scrapes)
	m.RSS = statusKB(readFile("/proc/"+strconv.Itoa(cmd.Process.Pid)+"/status"), "VmRSS:")
	m.Records, _ = f.h.client.DBSize(ctx).Result()
	if last := scrapes[len(scrapes)-1]; last.view > 0 && m.Records > 0 {
		m.ViewB = last.view / float64(m.Records)
	}
	m.Reported = scrapes[len(scrapes)-1].mode
	ws, we := scrapes[0].at, scrapes[len(scrapes)-1].at
	m.Stale, m.Missed, m.Early = staleDelays(f.deadlines(), scrapes, f.base, ws, we.Add(-tailFor))
	return m, nil
}

// watch scrapes every followScrape for window while measuring the phase.
func (f *followRun) watch(ctx context.Context, url string, window time.Duration, idle float64) ([]scrape, FollowPhase, error) {
	var scrapes []scrape
	done := make(chan struct{})
	scraped := make(chan error, 1)
	go func() {
		t := time.NewTicker(followScrape)
		defer t.Stop()
		for {
			s, err := readMetrics(ctx, url)
			if err != nil {
				scraped <- err
				return
			}
			scrapes = append(scrapes, s)
			select {
			case <-done:
				scraped <- nil
				return
			case <-t.C:
			}
		}
	}()
	phase, err := f.phase(ctx, window, idle)
	close(done)
	if serr := <-scraped; err == nil && serr != nil {
		err = fmt.Errorf("scraping the exporter: %w", serr)
	}
	if err == nil && len(scrapes) < 2 {
		err = errors.New("fewer than two scrapes in the window")
	}
	return scrapes, phase, err
}

// staleDelays matches the crashes' deadlines (in order) with the stale
// count: the k-th deadline is counted once the count reaches base+k+1,
// so its delay is the first scrape at that count less the deadline. Only
// deadlines in [from, to] are measured (later ones may not be seen yet by
// the window's end); a count reached before its deadline is early (some
// other record turned stale: the match is off, and the report says so).
func staleDelays(deadlines []time.Time, scrapes []scrape, base int64, from, to time.Time) (delays []time.Duration, missed, early int) {
	j := 0
	for k, d := range deadlines {
		if d.Before(from) || d.After(to) {
			continue
		}
		want := base + int64(k) + 1
		for j < len(scrapes) && scrapes[j].stale < want {
			j++
		}
		switch {
		case j == len(scrapes):
			missed++
		case scrapes[j].at.Before(d):
			early++
			delays = append(delays, 0)
		default:
			delays = append(delays, scrapes[j].at.Sub(d))
		}
	}
	return delays, missed, early
}

// readMetrics reads what the step needs from the exporter's /metrics.
func readMetrics(ctx context.Context, url string) (scrape, error) {
	s := scrape{at: time.Now()}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return s, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 8<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := metricLine(sc.Text())
		switch {
		case !ok:
		case strings.HasPrefix(name, "idemctl_stale_records{"):
			s.stale += int64(value)
		case name == "idemctl_last_success_timestamp_seconds":
			s.done = s.done || value > 0
		case strings.HasPrefix(name, "idemctl_follow_mode{") && value == 1:
			s.mode = labelValue(name, "mode")
		case name == "idemctl_follow_view_bytes":
			s.view = value
		}
	}
	return s, sc.Err()
}

// metricLine splits an exposition line into its series and value.
func metricLine(line string) (series string, value float64, ok bool) {
	if line == "" || line[0] == '#' {
		return "", 0, false
	}
	i := strings.LastIndexByte(line, ' ')
	if i < 0 {
		return "", 0, false
	}
	v, err := strconv.ParseFloat(line[i+1:], 64)
	return line[:i], v, err == nil
}

// labelValue is one label's value in a series name.
func labelValue(series, label string) string {
	_, rest, ok := strings.Cut(series, label+`="`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}

func readFile(path string) []byte {
	b, _ := os.ReadFile(path)
	return b
}

// stopProcess asks the exporter to stop, then kills it; exited closes
// when it has.
func stopProcess(cmd *exec.Cmd, exited <-chan struct{}) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
