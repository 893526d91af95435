//go:build !unix

package plugin

import "os/exec"

// setProcessGroup is a no-op where process groups do not exist; the
// context still kills the plugin itself.
func setProcessGroup(*exec.Cmd) {}
