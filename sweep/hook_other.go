//go:build !unix

package sweep

import "os/exec"

// killGroup leaves cmd's cancellation as os/exec has it (the command
// itself is killed): process groups are a Unix notion.
func killGroup(cmd *exec.Cmd) {}
