package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// TUIResult is the time from the TUI process starting to its first record
// rows on the screen, read from a real terminal (tmux).
type TUIResult struct {
	Skipped    string          `json:"skipped,omitempty"`
	FirstFrame []time.Duration `json:"first_frame_ns,omitempty"` // the header drawn, no rows yet
	FirstRows  []time.Duration `json:"first_rows_ns,omitempty"`
	Screen     string          `json:"screen,omitempty"` // the screen when rows first showed (last round)
	// The last round also waits for the whole scan on screen and reads the
	// TUI's memory then: every record held.
	ScanDone  time.Duration `json:"scan_done_ns,omitempty"` // start → the scan's completion line
	HeldRSSKB int64         `json:"held_peak_rss_kb,omitempty"`
	HeldNowKB int64         `json:"held_rss_kb,omitempty"`
	HeldErr   string        `json:"held_error,omitempty"`
}

// Median of the rounds.
func (t *TUIResult) Median() time.Duration { return medianDur(t.FirstRows) }

const tuiWidth, tuiHeight = 120, 40

func (h *harness) tui(ctx context.Context) error {
	h.res.TUI = &TUIResult{}
	if _, err := exec.LookPath("tmux"); err != nil {
		h.res.TUI.Skipped = "tmux not found in PATH (apt-get install -y tmux)"
		h.cfg.logf("tui: skipped: %s", h.res.TUI.Skipped)
		return nil
	}
	for i := range h.cfg.Rounds {
		h.waitQuiet(ctx)
		frame, rows, screen, err := h.tuiFirstRows(ctx, i, i == h.cfg.Rounds-1)
		if err != nil {
			return err
		}
		h.res.TUI.FirstFrame = append(h.res.TUI.FirstFrame, frame)
		h.res.TUI.FirstRows = append(h.res.TUI.FirstRows, rows)
		h.res.TUI.Screen = screen
		h.cfg.logf("tui: first frame after %v, first rows after %v", frame.Round(time.Millisecond), rows.Round(time.Millisecond))
	}
	return nil
}

// tuiFirstRows starts `idemctl ui` in a detached tmux session; the shell
// writes the time just before it execs idemctl, and the screen is polled
// until a record row (a key of the seeded keyspace) shows. The polling
// (one `tmux capture-pane` every few ms) makes this an upper bound.
func (h *harness) tuiFirstRows(ctx context.Context, round int, held bool) (frame, rows time.Duration, screen string, err error) {
	sock := fmt.Sprintf("idemctl-bench-%d-%d", os.Getpid(), round)
	startFile := filepath.Join(h.tmp, fmt.Sprintf("tui-start-%d", round))
	var quoted []string
	for _, a := range append([]string{h.bin}, h.idemctlArgs("ui")...) {
		quoted = append(quoted, shellQuote(a))
	}
	script := fmt.Sprintf("date +%%s%%N > %s; exec %s", shellQuote(startFile), strings.Join(quoted, " "))
	tmux := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "tmux", append([]string{"-L", sock}, args...)...)
		cmd.Env = append(h.env(), "NO_COLOR=1")
		return cmd.CombinedOutput()
	}
	if out, err := tmux("new-session", "-d", "-s", "bench", "-x", strconv.Itoa(tuiWidth), "-y", strconv.Itoa(tuiHeight), script); err != nil {
		return 0, 0, "", fmt.Errorf("tmux new-session: %v\n%s", err, out)
	}
	defer tmux("kill-server")

	var frameAt time.Time
	deadline := time.Now().Add(30 * time.Second)
	for {
		scr, err := tmux("capture-pane", "-p", "-t", "bench")
		seen := time.Now()
		if err == nil && frameAt.IsZero() && strings.Contains(string(scr), "READ-ONLY") {
			frameAt = seen
		}
		if err == nil && hasRecordRow(string(scr)) {
			b, err := os.ReadFile(startFile)
			if err != nil {
				return 0, 0, "", fmt.Errorf("tui start time: %v", err)
			}
			ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			if err != nil {
				return 0, 0, "", fmt.Errorf("tui start time %q: %v", b, err)
			}
			start := time.Unix(0, ns)
			if frameAt.IsZero() {
				frameAt = seen
			}
			if held {
				h.tuiHeld(ctx, tmux, start)
			}
			return frameAt.Sub(start), seen.Sub(start), string(scr), nil
		}
		if time.Now().After(deadline) {
			return 0, 0, "", fmt.Errorf("the TUI showed no record row within 30 s:\n%s", scr)
		}
		if err := ctx.Err(); err != nil {
			return 0, 0, "", err
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// tuiHeld waits for the TUI's scan-complete line, then reads the TUI
// process's peak and current RSS: what holding every record costs.
func (h *harness) tuiHeld(ctx context.Context, tmux func(...string) ([]byte, error), start time.Time) {
	t := h.res.TUI
	out, err := tmux("list-panes", "-t", "bench", "-F", "#{pane_pid}")
	if err != nil {
		t.HeldErr = fmt.Sprintf("tmux list-panes: %v", err)
		return
	}
	pid := strings.TrimSpace(string(out)) // the shell exec'd idemctl: its pid
	// Budget: ten times the rate the scan variants reach, at least a minute.
	deadline := time.Now().Add(max(time.Minute, time.Duration(h.cfg.N/10_000)*time.Second))
	for {
		scr, err := tmux("capture-pane", "-p", "-t", "bench")
		if err == nil && strings.Contains(string(scr), "✓ ") && strings.Contains(string(scr), " records in ") {
			t.ScanDone = time.Since(start)
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.HeldErr = fmt.Sprintf("the scan did not complete on screen within %v", time.Since(start).Round(time.Second))
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second) // the last frames drawn, the scan's buffers released
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.HeldErr = fmt.Sprintf("reading the TUI's memory: %v", err)
		return
	}
	t.HeldRSSKB, t.HeldNowKB = statusKB(status, "VmHWM:"), statusKB(status, "VmRSS:")
	h.cfg.logf("tui: every record on screen after %v; RSS %.0f MB (peak %.0f MB)", t.ScanDone.Round(time.Millisecond), mb(t.HeldNowKB), mb(t.HeldRSSKB))
}

// hasRecordRow reports whether a table row of a seeded record is on screen.
func hasRecordRow(screen string) bool {
	for _, l := range strings.Split(screen, "\n") {
		// The key column drops the keyspace's literal prefix: customer-N:ENDPOINT:req-…
		if strings.Contains(l, "customer-") && strings.Contains(l, ":req-") {
			return true
		}
	}
	return false
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// evaluateTUI checks the time to the first rows on screen.
func (r *Results) evaluateTUI(add func(Target)) {
	tui := Target{Name: "TUI first rows on screen", Want: "≤ 300 ms"}
	if r.TUI != nil && len(r.TUI.FirstRows) > 0 {
		m := r.TUI.Median()
		tui.Got = fmt.Sprintf("%d ms (median of %d, tmux-polled; first frame without rows at %d ms)",
			m.Milliseconds(), len(r.TUI.FirstRows), medianDur(r.TUI.FirstFrame).Milliseconds())
		tui.Met, tui.Measured = m <= 300*time.Millisecond, true
		if r.N < 1_000_000 {
			tui.Note = "the target is on the 1M keyspace"
		}
	} else if r.TUI != nil && r.TUI.Skipped != "" {
		tui.Got = "skipped: " + r.TUI.Skipped
	} else {
		tui.Got = "not measured"
	}
	add(tui)
}

// evaluateHeld checks the TUI's RSS holding every record.
func (r *Results) evaluateHeld(add func(Target)) {
	held := Target{Name: "TUI RSS holding every record", Want: "≤ 1.5 GB at 10M", Got: "not measured (-tui)"}
	if t := r.TUI; t != nil && t.HeldRSSKB > 0 {
		held.Got = fmt.Sprintf("%.0f MB peak (%.0f MB after the scan) for %d records: %.0f B per record; whole scan shown after %v",
			mb(t.HeldRSSKB), mb(t.HeldNowKB), r.N, float64(t.HeldRSSKB)*1024/float64(r.N), t.ScanDone.Round(time.Millisecond))
		held.Met, held.Measured = r.N < TenM || mb(t.HeldRSSKB) <= 1.5*1024, r.N >= TenM
		if r.N < TenM {
			held.Note = "the target is on 10M records (-n 10000000)"
		}
	} else if t != nil && t.HeldErr != "" {
		held.Got = "not measured: " + t.HeldErr
	}
	add(held)
}
