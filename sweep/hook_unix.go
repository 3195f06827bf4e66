//go:build unix

package sweep

import (
	"os/exec"
	"syscall"
)

// killGroup starts cmd in a process group of its own and makes its
// cancellation kill the whole group, so that a timeout stops what the
// command started too (sh -c 'sleep 20' leaves sleep behind when only sh
// is killed).
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
