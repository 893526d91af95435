package git

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/internal/treefs"
)

// lfsScan is what a commit's tree holds of Git LFS: its pointer blobs and
// the .lfsconfig at its root. It is kept per store and commit.
type lfsScan struct {
	pointers  map[plumbing.Hash]lfsPointer
	paths     map[plumbing.Hash]string // a path of each pointer, for messages
	lfsconfig []byte
}

// lfsMediaType is the Git LFS API's content type.
const lfsMediaType = "application/vnd.git-lfs+json"

// batchSize is how many objects one batch request asks for.
const batchSize = 100

// maxBatchResponse bounds a batch response.
const maxBatchResponse = 16 << 20

// attachLFS makes snap read the LFS objects its pointer files name:
// fetched once per object (cached by oid under the store's folder, which
// is per repository and identity), with e's credentials, within
// Options.LFS.
func (s *Source) attachLFS(ctx context.Context, e endpoint, snap *Snapshot, commit plumbing.Hash) error {
	scan, err := s.scanLFS(e, snap, commit)
	if err != nil {
		return err
	}
	snap.lfs = true
	if len(scan.pointers) == 0 {
		return nil
	}
	lim := s.opts.LFS
	if len(scan.pointers) > lim.MaxObjects {
		return &LFSError{Err: fmt.Errorf("%d objects, more than %d: %w", len(scan.pointers), lim.MaxObjects, ErrLFSLimit)}
	}
	var total int64
	for h, p := range scan.pointers {
		if p.size > lim.MaxObjectBytes {
			return &LFSError{Path: scan.paths[h], OID: p.oid, Err: fmt.Errorf("%d bytes, more than %d: %w", p.size, lim.MaxObjectBytes, ErrLFSLimit)}
		}
		total += p.size
	}
	if total > lim.MaxTotalBytes {
		return &LFSError{Err: fmt.Errorf("%d bytes of objects, more than %d: %w", total, lim.MaxTotalBytes, ErrLFSLimit)}
	}
	dir := filepath.Join(s.opts.CacheDir, "lfs", e.storeKey())
	content := map[plumbing.Hash]treefs.Content{}
	var missing []plumbing.Hash
	for h, p := range scan.pointers {
		path := lfsObjectPath(dir, p.oid)
		if st, err := os.Stat(path); err == nil && st.Size() == p.size {
			content[h] = treefs.Content{Path: path, Size: p.size}
			continue
		}
		missing = append(missing, h)
	}
	if len(missing) > 0 {
		sort.Slice(missing, func(i, j int) bool { return scan.paths[missing[i]] < scan.paths[missing[j]] })
		key := "lfs/" + e.storeKey() + "/" + commit.String()
		ch := s.fetches.DoChan(key, func() (any, error) {
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lim.Timeout)
			defer cancel()
			return nil, s.downloadLFS(fctx, e, scan, missing, dir)
		})
		select {
		case r := <-ch:
			if r.Err != nil {
				return r.Err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
		for _, h := range missing {
			p := scan.pointers[h]
			content[h] = treefs.Content{Path: lfsObjectPath(dir, p.oid), Size: p.size}
		}
	}
	snap.FS.SetContent(content)
	return nil
}

// lfsObjectPath is where an object lives in the cache (git-lfs's layout).
func lfsObjectPath(dir, oid string) string {
	return filepath.Join(dir, oid[0:2], oid[2:4], oid)
}

// scanLFS finds the pointer files of commit's tree, once per store and
// commit.
func (s *Source) scanLFS(e endpoint, snap *Snapshot, commit plumbing.Hash) (*lfsScan, error) {
	key := e.storeKey() + "/" + commit.String()
	if sc, ok := s.lfsScans.Get(key); ok {
		return sc, nil
	}
	sc := &lfsScan{pointers: map[plumbing.Hash]lfsPointer{}, paths: map[plumbing.Hash]string{}}
	files := 0
	err := snap.FS.WalkFiles(func(name string, h plumbing.Hash, size int64, read func() ([]byte, error)) error {
		files++
		if files > s.opts.LFS.MaxFiles {
			return &LFSError{Err: fmt.Errorf("more than %d files to look at for pointers: %w", s.opts.LFS.MaxFiles, ErrLFSLimit)}
		}
		if size > maxPointerBytes {
			return nil
		}
		if _, seen := sc.pointers[h]; seen {
			return nil
		}
		data, err := read()
		if err != nil {
			return err
		}
		if name == ".lfsconfig" {
			sc.lfsconfig = data
		}
		if p, ok := parsePointer(data); ok {
			sc.pointers[h], sc.paths[h] = p, name
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.lfsScans.Add(key, sc)
	return sc, nil
}

// batchObject is an object of a batch request or response.
type batchObject struct {
	OID     string `json:"oid"`
	Size    int64  `json:"size"`
	Actions map[string]struct {
		Href   string            `json:"href"`
		Header map[string]string `json:"header"`
	} `json:"actions,omitempty"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// downloadLFS asks the LFS server for the missing objects by batches and
// downloads each into dir.
func (s *Source) downloadLFS(ctx context.Context, e endpoint, scan *lfsScan, missing []plumbing.Hash, dir string) error {
	ep, err := lfsEndpoint(e, scan.lfsconfig)
	if err != nil {
		return err
	}
	client, err := s.lfsClient(e)
	if err != nil {
		return err
	}
	byOID := map[string]plumbing.Hash{}
	for _, h := range missing {
		byOID[scan.pointers[h].oid] = h
	}
	for start := 0; start < len(missing); start += batchSize {
		chunk := missing[start:min(start+batchSize, len(missing))]
		objs, err := s.lfsBatch(ctx, e, client, ep, scan, chunk)
		if err != nil {
			return err
		}
		for _, o := range objs {
			h, ok := byOID[o.OID]
			if !ok {
				continue // an object we did not ask for
			}
			path := scan.paths[h]
			if o.Error != nil {
				return &LFSError{Path: path, OID: o.OID, Err: lfsObjectError(o.Error.Code)}
			}
			dl, ok := o.Actions["download"]
			if !ok || dl.Href == "" {
				return &LFSError{Path: path, OID: o.OID, Err: fmt.Errorf("the LFS server gave no download for it: %w", source.ErrRepositoryNotFound)}
			}
			if err := s.lfsDownload(ctx, e, client, dl.Href, dl.Header, scan.pointers[h], dir); err != nil {
				return &LFSError{Path: path, OID: o.OID, Err: err}
			}
			delete(byOID, o.OID)
		}
	}
	for oid, h := range byOID {
		return &LFSError{Path: scan.paths[h], OID: oid, Err: fmt.Errorf("the LFS server did not answer for it: %w", source.ErrRepositoryNotFound)}
	}
	return nil
}

// lfsObjectError maps a batch object error code onto the sentinels.
func lfsObjectError(code int) error {
	switch code {
	case http.StatusNotFound, http.StatusGone:
		return fmt.Errorf("the LFS server does not have it (%d): %w", code, source.ErrRepositoryNotFound)
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("the LFS server refused it (%d): %w", code, source.ErrAuthentication)
	}
	return fmt.Errorf("the LFS server failed on it (%d): %w", code, source.ErrUnavailable)
}

// lfsBatch runs one batch request (download, basic transfer, sha256).
func (s *Source) lfsBatch(ctx context.Context, e endpoint, client *http.Client, ep string, scan *lfsScan, chunk []plumbing.Hash) ([]batchObject, error) {
	req := struct {
		Operation string        `json:"operation"`
		Transfers []string      `json:"transfers"`
		Objects   []batchObject `json:"objects"`
		HashAlgo  string        `json:"hash_algo"`
	}{Operation: "download", Transfers: []string{"basic"}, HashAlgo: "sha256"}
	for _, h := range chunk {
		p := scan.pointers[h]
		req.Objects = append(req.Objects, batchObject{OID: p.oid, Size: p.size})
	}
	body, _ := json.Marshal(req)
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, ep+"/objects/batch", bytes.NewReader(body))
	if err != nil {
		return nil, &LFSError{Err: fmt.Errorf("unparsable LFS endpoint: %w", source.ErrInvalidRepository)}
	}
	if err := s.opts.Policy.CheckURL(hreq.URL); err != nil {
		return nil, &LFSError{Err: err}
	}
	hreq.Header.Set("Accept", lfsMediaType)
	hreq.Header.Set("Content-Type", lfsMediaType)
	setAuthorization(hreq, e.creds, e.scopeURL)
	resp, err := client.Do(hreq)
	if err != nil {
		return nil, &LFSError{Err: classify(e, timeoutOr(ctx, err))}
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, &LFSError{Err: fmt.Errorf("the LFS server refused the batch request (%d): %w", resp.StatusCode, source.ErrAuthentication)}
	case resp.StatusCode == http.StatusNotFound:
		return nil, &LFSError{Err: fmt.Errorf("no LFS server at %s: %w", source.RedactURL(ep), source.ErrRepositoryNotFound)}
	case resp.StatusCode != http.StatusOK:
		return nil, &LFSError{Err: fmt.Errorf("the LFS server answered the batch request with %d: %w", resp.StatusCode, source.ErrUnavailable)}
	}
	var out struct {
		Objects []batchObject `json:"objects"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxBatchResponse)).Decode(&out); err != nil {
		return nil, &LFSError{Err: fmt.Errorf("the LFS server's batch response is not JSON: %w", source.ErrUnavailable)}
	}
	return out.Objects, nil
}

// lfsDownload fetches one object into dir, checking its size and sha256.
func (s *Source) lfsDownload(ctx context.Context, e endpoint, client *http.Client, href string, header map[string]string, p lfsPointer, dir string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, href, nil)
	if err != nil || (req.URL.Scheme != "https" && req.URL.Scheme != "http") {
		return fmt.Errorf("the LFS server's download URL is not an http(s) URL: %w", source.ErrInvalidRepository)
	}
	if err := s.opts.Policy.CheckURL(req.URL); err != nil {
		return err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if req.Header.Get("Authorization") == "" {
		setAuthorization(req, e.creds, e.scopeURL)
	}
	resp, err := client.Do(req)
	if err != nil {
		return classify(e, timeoutOr(ctx, err))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("the LFS storage refused the download (%d): %w", resp.StatusCode, source.ErrAuthentication)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("the LFS storage answered the download with %d: %w", resp.StatusCode, source.ErrUnavailable)
	}
	final := lfsObjectPath(dir, p.oid)
	if err := os.MkdirAll(filepath.Dir(final), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(final), ".download-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	sum := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, sum), io.LimitReader(resp.Body, p.size+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return classify(e, timeoutOr(ctx, err))
	}
	if n != p.size || hex.EncodeToString(sum.Sum(nil)) != p.oid {
		return fmt.Errorf("the downloaded object does not match its pointer (size or sha256): %w", source.ErrUnavailable)
	}
	return os.Rename(tmp.Name(), final)
}

// lfsClient is an HTTP client of e's transport (trust, client
// certificate, proxy, URL policy on every dial and redirect); credentials
// are set per request.
func (s *Source) lfsClient(e endpoint) (*http.Client, error) {
	base, err := s.transportFor(e.creds)
	if err != nil {
		return nil, err
	}
	policy := s.opts.Policy
	return &http.Client{Transport: base, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return errors.New("too many redirects")
		}
		return policy.CheckURL(req.URL)
	}}, nil
}
