//go:build windows

package verify

import (
	"errors"
	"os"
	"os/exec"
	"unsafe"

	"golang.org/x/sys/windows"
)

// processTree is a hook and everything it starts, ended together: on
// Windows a Job Object the hook is put in once started (what it starts
// inherits the job), which kills them all when it is terminated or
// closed. A child the hook starts in the instant before it joins the
// job escapes it: the nearest Windows has to a process group.
type processTree struct {
	cmd *exec.Cmd
	job windows.Handle
}

func newProcessTree(cmd *exec.Cmd) (*processTree, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return nil, err
	}
	return &processTree{cmd: cmd, job: job}, nil
}

// started puts the running hook in the job.
func (t *processTree) started() error {
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(t.cmd.Process.Pid))
	if err != nil {
		return err
	}
	defer windows.CloseHandle(p)
	return windows.AssignProcessToJobObject(t.job, p)
}

// kill ends every process in the job, and the hook itself should it not
// have joined it yet.
func (t *processTree) kill() error {
	if t.cmd.Process == nil {
		return nil
	}
	err := windows.TerminateJobObject(t.job, 1)
	if kerr := t.cmd.Process.Kill(); kerr != nil && !errors.Is(kerr, os.ErrProcessDone) && err == nil {
		err = kerr
	}
	return err
}

func (t *processTree) close() { windows.CloseHandle(t.job) }
