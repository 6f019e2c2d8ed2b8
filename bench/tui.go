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
		frame, rows, screen, err := h.tuiFirstRows(ctx, i)
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
func (h *harness) tuiFirstRows(ctx context.Context, round int) (frame, rows time.Duration, screen string, err error) {
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
