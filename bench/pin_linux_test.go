package main

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A child started pinned runs on the clients' CPUs, and the harness's
// thread that forked it is back on its own set afterwards.
func TestPinnedChildRunsOnTheClientsCPUs(t *testing.T) {
	p, err := newPinning()
	if err != nil {
		t.Fatal(err)
	}
	if p == nil { // one CPU: still check the mechanics, with that CPU on both sides
		var all unix.CPUSet
		if err := unix.SchedGetaffinity(0, &all); err != nil {
			t.Fatal(err)
		}
		p = &pinning{server: all, client: all, all: all}
	}
	want := cpuSetList(&p.client)
	var out bytes.Buffer
	cmd := exec.Command("grep", "Cpus_allowed_list", "/proc/self/status")
	cmd.Stdout = &out
	if err := p.start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(strings.TrimPrefix(out.String(), "Cpus_allowed_list:")); got != want {
		t.Errorf("child ran on CPUs %q, want %q", got, want)
	}
	// Every thread of this process still may use every CPU it could.
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
		if err != nil {
			continue
		}
		if got := statusField(b, "Cpus_allowed_list"); got != cpuSetList(&p.all) {
			t.Errorf("thread %s left on CPUs %q, want %q", task.Name(), got, cpuSetList(&p.all))
		}
	}
}

// cpuSetList renders a set as the kernel's Cpus_allowed_list does.
func cpuSetList(s *unix.CPUSet) string {
	var parts []string
	for i := 0; i < 1024; i++ {
		if !s.IsSet(i) {
			continue
		}
		j := i
		for j+1 < 1024 && s.IsSet(j+1) {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(i))
		} else {
			parts = append(parts, strconv.Itoa(i)+"-"+strconv.Itoa(j))
		}
		i = j
	}
	return strings.Join(parts, ",")
}

func statusField(status []byte, name string) string {
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
