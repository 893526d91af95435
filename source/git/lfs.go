package git

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
)

// LFSOptions bound what a snapshot of a repository whose credentials set
// EnableLFS (Argo CD's enableLfs) fetches from its Git LFS server. A
// snapshot past a bound fails with an *LFSError wrapping ErrLFSLimit; a
// bound of zero takes its default.
type LFSOptions struct {
	// MaxFiles bounds the files of a tree looked at for LFS pointers.
	// Default 1,000,000.
	MaxFiles int
	// MaxObjects bounds the LFS objects of one snapshot. Default 10,000.
	MaxObjects int
	// MaxObjectBytes bounds one LFS object. Default 1 GiB.
	MaxObjectBytes int64
	// MaxTotalBytes bounds the LFS objects of one snapshot together.
	// Default 4 GiB.
	MaxTotalBytes int64
	// Timeout bounds the LFS downloads of one snapshot (on top of the
	// caller's context). Default 10 minutes.
	Timeout time.Duration
}

// DefaultLFSOptions returns the defaults of LFSOptions.
func DefaultLFSOptions() LFSOptions {
	return LFSOptions{MaxFiles: 1_000_000, MaxObjects: 10_000, MaxObjectBytes: 1 << 30, MaxTotalBytes: 4 << 30, Timeout: 10 * time.Minute}
}

// withDefaults fills the zero fields of o.
func (o LFSOptions) withDefaults() LFSOptions {
	d := DefaultLFSOptions()
	if o.MaxFiles <= 0 {
		o.MaxFiles = d.MaxFiles
	}
	if o.MaxObjects <= 0 {
		o.MaxObjects = d.MaxObjects
	}
	if o.MaxObjectBytes <= 0 {
		o.MaxObjectBytes = d.MaxObjectBytes
	}
	if o.MaxTotalBytes <= 0 {
		o.MaxTotalBytes = d.MaxTotalBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = d.Timeout
	}
	return o
}

// ErrLFSLimit: the LFS objects of a snapshot are past LFSOptions.
var ErrLFSLimit = errors.New("git lfs objects past limits")

// LFSError is a Git LFS object of a snapshot that could not be had: it
// names the file and the object, never a credential.
type LFSError struct {
	// Path is the file pointing to the object ("" for the snapshot as a
	// whole).
	Path string
	// OID is the object's sha256 ("" when the error is not one object's).
	OID string
	// Err is the cause (a source sentinel, or ErrLFSLimit).
	Err error
}

// Error implements error.
func (e *LFSError) Error() string {
	switch {
	case e.Path != "" && e.OID != "":
		return fmt.Sprintf("git lfs: %s (object %s): %v", e.Path, e.OID, e.Err)
	case e.Path != "":
		return fmt.Sprintf("git lfs: %s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("git lfs: %v", e.Err)
}

// Unwrap returns the cause.
func (e *LFSError) Unwrap() error { return e.Err }

// maxPointerBytes is the largest blob read as a possible pointer (git-lfs
// reads no more either).
const maxPointerBytes = 1024

// lfsPointer is a parsed Git LFS pointer file.
type lfsPointer struct {
	oid  string // sha256, 64 lowercase hex digits
	size int64
}

// parsePointer parses a Git LFS pointer (spec v1: "version <url>", then
// sorted "key value" lines, each ending in a newline; oid sha256 and size
// required). ok is false for anything else: such a file is content.
func parsePointer(data []byte) (p lfsPointer, ok bool) {
	if len(data) == 0 || len(data) > maxPointerBytes || data[len(data)-1] != '\n' {
		return p, false
	}
	lines := strings.Split(string(data[:len(data)-1]), "\n")
	switch lines[0] {
	case "version https://git-lfs.github.com/spec/v1", "version https://hawser.github.com/spec/v1":
	default:
		return p, false
	}
	var haveOID, haveSize bool
	for _, l := range lines[1:] {
		k, v, found := strings.Cut(l, " ")
		if !found || k == "" {
			return p, false
		}
		switch k {
		case "oid":
			hexOID, isSHA := strings.CutPrefix(v, "sha256:")
			if !isSHA || len(hexOID) != 64 || strings.Trim(hexOID, "0123456789abcdef") != "" {
				return p, false
			}
			p.oid, haveOID = hexOID, true
		case "size":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return p, false
			}
			p.size, haveSize = n, true
		}
	}
	return p, haveOID && haveSize
}

// lfsEndpoint returns the LFS server of a repository: the lfs.url of the
// tree's .lfsconfig when it sets one, else, as git-lfs derives it, the
// clone URL with ".git" and "/info/lfs" appended (for an SSH remote, the
// https:// URL of its host and path).
func lfsEndpoint(e endpoint, lfsconfig []byte) (string, error) {
	if len(lfsconfig) > 0 {
		cfg := gitconfig.New()
		if err := gitconfig.NewDecoder(bytes.NewReader(lfsconfig)).Decode(cfg); err == nil {
			if u := strings.TrimSpace(cfg.Section("lfs").Option("url")); u != "" {
				parsed, err := url.Parse(u)
				if err != nil || (parsed.Scheme != "https" && parsed.Scheme != "http") || parsed.Host == "" || parsed.User != nil {
					return "", &LFSError{Path: ".lfsconfig", Err: fmt.Errorf("lfs.url is not an http(s) URL without credentials: %w", errInvalidLFS)}
				}
				return strings.TrimSuffix(u, "/"), nil
			}
		}
	}
	u := *e.url
	u.User = nil
	if u.Scheme == "ssh" {
		u.Scheme, u.Host = "https", u.Hostname()
	}
	p := strings.TrimSuffix(u.Path, "/")
	if !strings.HasSuffix(p, ".git") {
		p += ".git"
	}
	u.Path = p + "/info/lfs"
	return u.String(), nil
}

// errInvalidLFS is the cause of a malformed LFS setting.
var errInvalidLFS = errors.New("invalid git lfs setting")
