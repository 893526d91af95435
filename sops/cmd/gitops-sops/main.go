// Command gitops-sops is this module's Decryptor as a program, so that a
// host built without SOPS's cloud SDKs (gitopsctl, the operator: the
// library's own module) decrypts SOPS files through it, with package
// render/execdecrypt of the library.
//
// Usage:
//
//	gitops-sops [-age-key-file FILE]... [-age-key-env VAR]... id
//	gitops-sops [-age-key-file FILE]... [-age-key-env VAR]... decrypt NAME
//
// Keys are age identities (age's keys.txt format), read from files and
// from environment variables the host names (so a host passes the keys of
// a Secret without writing them to disk); nothing else of the environment
// is read for keys (SOPS_AGE_KEY, SOPS_AGE_KEY_FILE and keys.txt are not).
// Cloud KMS, Vault and PGP keys are refused (sops.ErrKMSNotAllowed).
//
// id prints the decryptor's ID (sops.Decryptor.ID: the SOPS version and a
// digest of the public recipients, no secret). decrypt reads the file
// named NAME (its extension picks the format) from standard input and
// writes its plaintext to standard output, exit status 0; a file that is
// not SOPS-encrypted exits with status 3 and writes nothing; a failure
// exits with status 1 and one line on standard error that names no key
// and no plaintext.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kubegitops/gitops/sops"
)

// Exit statuses of decrypt.
const (
	exitFailed       = 1
	exitUsage        = 2
	exitNotEncrypted = 3
)

// maxInput bounds the file read from standard input.
const maxInput = 64 << 20

// main runs the command with the process's arguments and streams.
func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// listFlag collects a repeatable flag.
type listFlag []string

// String implements flag.Value.
func (l *listFlag) String() string { return strings.Join(*l, ",") }

// Set implements flag.Value: each use of the flag adds a value.
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// run is the program, returning its exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("gitops-sops", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var files, envs listFlag
	fs.Var(&files, "age-key-file", "age identity file (keys.txt format); repeatable")
	fs.Var(&envs, "age-key-env", "environment variable holding age identities (keys.txt format); repeatable")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	opts := sops.DefaultOptions()
	for _, f := range files {
		keys, err := sops.ReadAgeKeyFile(f)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return exitFailed
		}
		opts.AgeKeys = append(opts.AgeKeys, keys...)
	}
	for _, name := range envs {
		v := getenv(name)
		if strings.TrimSpace(v) == "" {
			fmt.Fprintf(stderr, "%v: environment variable %s is empty\n", sops.ErrKeySource, name)
			return exitFailed
		}
		opts.AgeKeys = append(opts.AgeKeys, v)
	}
	d, err := sops.New(opts)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitFailed
	}
	switch rest := fs.Args(); {
	case len(rest) == 1 && rest[0] == "id":
		fmt.Fprintln(stdout, d.ID())
		return 0
	case len(rest) == 2 && rest[0] == "decrypt":
		return decrypt(ctx, d, rest[1], stdin, stdout, stderr)
	default:
		fmt.Fprintln(stderr, "usage: gitops-sops [-age-key-file FILE]... [-age-key-env VAR]... (id | decrypt NAME)")
		return exitUsage
	}
}

// decrypt decrypts standard input as the file name.
func decrypt(ctx context.Context, d *sops.Decryptor, name string, stdin io.Reader, stdout, stderr io.Writer) int {
	data, err := io.ReadAll(io.LimitReader(stdin, maxInput+1))
	if err == nil && len(data) > maxInput {
		err = errors.New("more than 64 MiB")
	}
	if err != nil {
		fmt.Fprintf(stderr, "read %s: %v\n", name, err)
		return exitFailed
	}
	plain, encrypted, err := d.Decrypt(ctx, name, data)
	switch {
	case err != nil:
		fmt.Fprintln(stderr, strings.ReplaceAll(err.Error(), "\n", " "))
		return exitFailed
	case !encrypted:
		return exitNotEncrypted
	}
	if _, err := stdout.Write(plain); err != nil {
		return exitFailed
	}
	return 0
}
