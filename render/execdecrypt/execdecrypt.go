// Package execdecrypt is a render.Decryptor that runs a decryption
// program for each encrypted file, so a host built from the library's own
// module decrypts SOPS files without linking SOPS and its cloud SDKs: the
// program is gitops-sops of the github.com/kubegitops/gitops/sops module
// (go install github.com/kubegitops/gitops/sops/cmd/gitops-sops), or any
// program speaking its protocol:
//
//	COMMAND ARGS... id             prints the decryptor's ID (no secret)
//	COMMAND ARGS... decrypt NAME   the file on stdin, its plaintext on
//	                               stdout; exit 0, or 3 when the file is
//	                               not encrypted, or else a failure whose
//	                               first stderr line is the cause
//
// Only files that may be SOPS documents (they hold "sops" or an
// ENC[AES256_GCM,...] value) are handed to the program; the others are
// answered "not encrypted" in process.
package execdecrypt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/kubegitops/gitops/render"
)

// ErrProgram is wrapped by every *ProgramError.
var ErrProgram = errors.New("decryption program failed")

// ProgramError is a run of the decryption program that failed: it names
// the command and the file, with the first line the program wrote on
// standard error (which, for gitops-sops, names no key and no plaintext).
type ProgramError struct {
	// Command is the program.
	Command string
	// File is the file being decrypted, empty for id.
	File string
	// Message is the program's first line of standard error, or how it
	// failed to run.
	Message string
}

// Error implements error.
func (e *ProgramError) Error() string {
	if e.File == "" {
		return fmt.Sprintf("%s: %s", e.Command, e.Message)
	}
	return fmt.Sprintf("%s (decrypting %s): %s", e.Command, e.File, e.Message)
}

// Unwrap returns ErrProgram.
func (e *ProgramError) Unwrap() error { return ErrProgram }

// Options configure a Decryptor.
type Options struct {
	// Command is the program, a path or a name looked up in PATH.
	// Required.
	Command string
	// Args come before the subcommand: the program's key flags, for
	// gitops-sops -age-key-file FILE or -age-key-env VAR.
	Args []string
	// Env is added to the program's environment (the process's own), for
	// example the variable -age-key-env names.
	Env []string
	// Timeout bounds each run. Default 30 seconds.
	Timeout time.Duration
}

// Decryptor runs Options.Command. It is safe for concurrent use.
type Decryptor struct {
	opts Options
	path string
	id   string
}

var _ render.Decryptor = (*Decryptor)(nil)

// exitNotEncrypted is the program's status for a file that is not
// encrypted.
const exitNotEncrypted = 3

// New finds the program and asks it for its ID: a program that is missing
// or fails (a key file that does not parse) is a *ProgramError here, not
// at the first render.
func New(ctx context.Context, opts Options) (*Decryptor, error) {
	if opts.Command == "" {
		return nil, errors.New("execdecrypt: no command")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	p, err := exec.LookPath(opts.Command)
	if err != nil {
		return nil, &ProgramError{Command: opts.Command, Message: err.Error()}
	}
	d := &Decryptor{opts: opts, path: p}
	out, err := d.run(ctx, nil, "", "id")
	if err != nil {
		return nil, err
	}
	d.id = "exec " + strings.TrimSpace(string(out))
	return d, nil
}

// ID implements render.Decryptor: the program's own ID.
func (d *Decryptor) ID() string { return d.id }

// Decrypt implements render.Decryptor.
func (d *Decryptor) Decrypt(ctx context.Context, name string, data []byte) ([]byte, bool, error) {
	if !bytes.Contains(data, []byte("sops")) && !bytes.Contains(data, []byte("ENC[AES256_GCM,")) {
		return nil, false, nil
	}
	out, err := d.run(ctx, data, name, "decrypt", name)
	var pe *ProgramError
	if errors.As(err, &pe) && pe.Message == notEncrypted {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	return out, true, nil
}

// notEncrypted marks the run whose program exited exitNotEncrypted.
const notEncrypted = "not encrypted"

// run runs the program with args after Options.Args, stdin as its input,
// and returns its standard output.
func (d *Decryptor) run(ctx context.Context, stdin []byte, file string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, d.path, append(append([]string{}, d.opts.Args...), args...)...)
	cmd.Env = append(os.Environ(), d.opts.Env...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil {
		return stdout.Bytes(), nil
	}
	var exit *exec.ExitError
	msg := err.Error()
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == exitNotEncrypted:
		msg = notEncrypted
	case ctx.Err() != nil:
		msg = fmt.Sprintf("no answer within %s", d.opts.Timeout)
	case errors.As(err, &exit):
		if line, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n"); line != "" {
			msg = line
		}
	}
	return nil, &ProgramError{Command: d.opts.Command, File: file, Message: msg}
}
