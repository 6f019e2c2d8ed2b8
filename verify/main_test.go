package verify

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain doubles as the hooks the tests run: the test binary re-executed
// with VERIFY_TEST_HOOK set behaves as that hook instead of testing.
func TestMain(m *testing.M) {
	if mode := os.Getenv("VERIFY_TEST_HOOK"); mode != "" {
		os.Exit(fakeHook(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

func fakeHook(mode string, args []string) int {
	switch mode {
	case "done":
		fmt.Printf(`{"verdict":"done","ref":"order-%s","status":201,"response":{"id":1},"detail":"found"}`+"\n", strings.Join(args, ","))
	case "not_done":
		fmt.Println(`{"verdict": "not_done", "detail": "no order"}`)
	case "unknown":
		fmt.Println(`{"verdict": "unknown", "detail": "database unreachable"}`)
	case "args":
		// prints its arguments as the ref, one JSON string each
		fmt.Printf(`{"verdict":"not_done","detail":%q}`, strings.Join(args, "|"))
	case "hang":
		time.Sleep(time.Hour)
	case "hang-child":
		// a grandchild that keeps stdout open after the hook exits
		cmd := exec.Command("sleep", "3600")
		cmd.Stdout = os.Stdout
		_ = cmd.Start()
		fmt.Printf("%d\n", cmd.Process.Pid)
		return 0
	case "hang-child-wait":
		// the hook and its grandchild both hang: the group is killed
		cmd := exec.Command("sleep", "3600")
		cmd.Stdout = os.Stdout
		_ = cmd.Start()
		_ = os.WriteFile(args[0], []byte(fmt.Sprint(cmd.Process.Pid)), 0o600)
		time.Sleep(time.Hour)
	case "crash":
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Hour)
	case "exit3":
		fmt.Println(`{"verdict":"done","ref":"x"}`)
		fmt.Fprintln(os.Stderr, "psql: connection refused\x1b[31m")
		return 3
	case "garbage":
		fmt.Println("Order found! ok")
	case "two":
		fmt.Println(`{"verdict":"done","ref":"a"}`)
		fmt.Println(`{"verdict":"not_done"}`)
	case "huge":
		line := strings.Repeat("x", 1<<20)
		for {
			if _, err := fmt.Println(line); err != nil {
				return 0
			}
		}
	case "control":
		fmt.Println("\x1b]0;pwned\x07{\"verdict\":\"done\",\"ref\":\"a\"}")
	case "control-ref":
		fmt.Println(`{"verdict":"done","ref":"a\u001b[2Jb"}`)
	case "array":
		fmt.Println(`[{"verdict":"done"}]`)
	case "bad-verdict":
		fmt.Println(`{"verdict":"yes"}`)
	case "bad-status":
		fmt.Println(`{"verdict":"done","ref":"a","status":"two hundred"}`)
	case "not-utf8":
		os.Stdout.Write([]byte("{\"verdict\":\"done\",\"ref\":\"\xff\"}"))
	case "empty":
	case "truncated":
		fmt.Print(`{"verdict":"done","ref":`)
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", mode)
		return 99
	}
	return 0
}
