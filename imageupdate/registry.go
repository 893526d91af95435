package imageupdate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"golang.org/x/sync/singleflight"
	"golang.org/x/time/rate"
)

// RegistryOptions configure a Registry. Start from DefaultRegistryOptions.
type RegistryOptions struct {
	// Timeout bounds every registry call (one tag page, one manifest, one
	// config blob), on top of the caller's context. Default 30 s.
	Timeout time.Duration
	// Interval is how long tag lists and tag metadata are reused: one scan
	// per image (and credentials) per interval however many applications
	// use it. Default 2 min (Argo CD Image Updater's check interval).
	Interval time.Duration
	// RequestsPerSecond and Burst rate-limit the requests sent to each
	// registry host. Default 20/s, burst 10.
	RequestsPerSecond float64
	Burst             int
	// MaxTags bounds the tags listed for one repository; a longer list is
	// an error wrapping ErrTooManyTags. Default 100000.
	MaxTags int
	// Transport, when set, replaces the HTTP transport (tests, proxies).
	// Rate limiting still applies.
	Transport http.RoundTripper
}

// DefaultRegistryOptions returns 30 s per call, a 2 min interval, 20
// requests/s (burst 10) per registry and at most 100000 tags.
func DefaultRegistryOptions() RegistryOptions {
	return RegistryOptions{Timeout: 30 * time.Second, Interval: 2 * time.Minute, RequestsPerSecond: 20, Burst: 10, MaxTags: 100000}
}

// RegistryCredentials authenticate to a registry. They never enter a
// cache key, log or error except as a hash.
type RegistryCredentials struct {
	// Username and Password are basic credentials (a token as password for
	// most registries).
	Username, Password string
	// IdentityToken is an OAuth2 refresh token (Docker config
	// "identitytoken").
	IdentityToken string
}

func (c *RegistryCredentials) authenticator() authn.Authenticator {
	if c == nil {
		return authn.Anonymous
	}
	return authn.FromConfig(authn.AuthConfig{Username: c.Username, Password: c.Password, IdentityToken: c.IdentityToken})
}

func (c *RegistryCredentials) key() string {
	if c == nil {
		return "anonymous"
	}
	h := sha256.Sum256([]byte(c.Username + "\x00" + c.Password + "\x00" + c.IdentityToken))
	return hex.EncodeToString(h[:8])
}

// RegistryStats count the calls a Registry made (not cache hits).
type RegistryStats struct {
	// TagLists is the number of tag listings (each may span pages).
	TagLists int64
	// Manifests is the number of manifests (or indexes) fetched.
	Manifests int64
}

// Registry lists tags and reads manifests through go-containerregistry,
// with a cache per interval, one call in flight per key, and a rate limit
// per registry host. It is safe for concurrent use.
type Registry struct {
	opts      RegistryOptions
	transport http.RoundTripper
	flight    singleflight.Group

	mu       sync.Mutex
	limiters map[string]*rate.Limiter
	// pullers, one per set of credentials, keep each repository's
	// authenticated transport (tokens) between calls.
	pullers map[string]*remote.Puller
	cache   map[string]cached

	tagLists, manifests atomic.Int64
}

type cached struct {
	at    time.Time
	tags  []string
	meta  Tag
	isTag bool
}

// NewRegistry returns a Registry; zero fields of opts take their defaults.
func NewRegistry(opts RegistryOptions) *Registry {
	def := DefaultRegistryOptions()
	if opts.Timeout <= 0 {
		opts.Timeout = def.Timeout
	}
	if opts.Interval <= 0 {
		opts.Interval = def.Interval
	}
	if opts.RequestsPerSecond <= 0 {
		opts.RequestsPerSecond = def.RequestsPerSecond
	}
	if opts.Burst <= 0 {
		opts.Burst = def.Burst
	}
	if opts.MaxTags <= 0 {
		opts.MaxTags = def.MaxTags
	}
	base := opts.Transport
	if base == nil {
		base = &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: opts.Timeout,
			MaxIdleConnsPerHost:   8,
			IdleConnTimeout:       90 * time.Second,
		}
	}
	r := &Registry{opts: opts, limiters: map[string]*rate.Limiter{}, pullers: map[string]*remote.Puller{}, cache: map[string]cached{}}
	r.transport = roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if err := r.limiter(req.URL.Host).Wait(req.Context()); err != nil {
			return nil, fmt.Errorf("%w of %s: %v", errRateLimit, req.URL.Host, err)
		}
		return base.RoundTrip(req)
	})
	return r
}

// Interval is how long scans are reused.
func (r *Registry) Interval() time.Duration { return r.opts.Interval }

// Stats returns the calls made so far.
func (r *Registry) Stats() RegistryStats {
	return RegistryStats{TagLists: r.tagLists.Load(), Manifests: r.manifests.Load()}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

// RoundTrip implements http.RoundTripper.
func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func (r *Registry) limiter(host string) *rate.Limiter {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.limiters[host]
	if !ok {
		l = rate.NewLimiter(rate.Limit(r.opts.RequestsPerSecond), r.opts.Burst)
		r.limiters[host] = l
	}
	return l
}

// lookup returns a cached entry younger than the interval.
func (r *Registry) lookup(key string) (cached, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.cache[key]
	if !ok || time.Since(c.at) >= r.opts.Interval {
		return cached{}, false
	}
	return c, true
}

func (r *Registry) store(key string, c cached) {
	c.at = time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	// Expired entries go when the cache is written: the cache never holds
	// more than one interval's worth of keys.
	for k, v := range r.cache {
		if time.Since(v.at) >= r.opts.Interval {
			delete(r.cache, k)
		}
	}
	r.cache[key] = c
}

// cachedCall runs fn once per key and interval; concurrent callers share it.
func (r *Registry) cachedCall(key string, fn func() (cached, error)) (cached, error) {
	if c, ok := r.lookup(key); ok {
		return c, nil
	}
	v, err, _ := r.flight.Do(key, func() (any, error) {
		if c, ok := r.lookup(key); ok {
			return c, nil
		}
		c, err := fn()
		if err != nil {
			return cached{}, err
		}
		r.store(key, c)
		return c, nil
	})
	if err != nil {
		return cached{}, err
	}
	return v.(cached), nil
}

// puller returns the puller of creds. Its per-call contexts carry the
// deadlines; token refreshes run under the request's context.
func (r *Registry) puller(creds *RegistryCredentials) (*remote.Puller, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.pullers[creds.key()]; ok {
		return p, nil
	}
	p, err := remote.NewPuller(remote.WithAuth(creds.authenticator()), remote.WithTransport(r.transport))
	if err != nil {
		return nil, errorf(ErrRegistry, "%v", err)
	}
	r.pullers[creds.key()] = p
	return p, nil
}

// Tags lists the tags of repository (cached per interval and credentials).
func (r *Registry) Tags(ctx context.Context, repository string, creds *RegistryCredentials) ([]string, error) {
	repo, err := name.NewRepository(repository)
	if err != nil {
		return nil, errorf(ErrAnnotation, "%q is not an image name", repository)
	}
	c, err := r.cachedCall("tags\x00"+repo.Name()+"\x00"+creds.key(), func() (cached, error) {
		ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
		defer cancel()
		r.tagLists.Add(1)
		p, err := r.puller(creds)
		if err != nil {
			return cached{}, err
		}
		l, err := p.Lister(ctx, repo)
		if err != nil {
			return cached{}, classify(ctx, err)
		}
		var tags []string
		for {
			page, err := l.Next(ctx)
			if err != nil {
				return cached{}, classify(ctx, err)
			}
			tags = append(tags, page.Tags...)
			if len(tags) > r.opts.MaxTags {
				return cached{}, errorf(ErrTooManyTags, "%s lists more than %d tags", repo.Name(), r.opts.MaxTags)
			}
			if !l.HasNext() {
				break
			}
		}
		return cached{tags: tags}, nil
	})
	if err != nil {
		return nil, err
	}
	return c.tags, nil
}

// Describe fetches what a tag points to: its digest, platforms and
// creation date (cached per interval). platforms, when set, restrict an
// index to the matching manifests for Created; Platforms always lists what
// the tag offers. withConfig false skips the config blobs (Created stays
// zero).
func (r *Registry) Describe(ctx context.Context, repository, tag string, creds *RegistryCredentials, platforms []string, withConfig bool) (Tag, error) {
	ref, err := name.NewTag(repository + ":" + tag)
	if err != nil {
		return Tag{}, errorf(ErrRegistry, "%s:%s is not a valid reference", repository, tag)
	}
	key := fmt.Sprintf("tag\x00%s\x00%s\x00%v\x00%v", ref.Name(), creds.key(), platforms, withConfig)
	c, err := r.cachedCall(key, func() (cached, error) {
		ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
		defer cancel()
		r.manifests.Add(1)
		p, err := r.puller(creds)
		if err != nil {
			return cached{}, err
		}
		desc, err := p.Get(ctx, ref)
		if err != nil {
			return cached{}, classify(ctx, err)
		}
		t := Tag{Name: tag, Digest: desc.Digest.String()}
		if desc.MediaType.IsIndex() {
			idx, err := desc.ImageIndex()
			if err != nil {
				return cached{}, classify(ctx, err)
			}
			im, err := idx.IndexManifest()
			if err != nil {
				return cached{}, classify(ctx, err)
			}
			for _, m := range im.Manifests {
				if m.Platform == nil {
					continue
				}
				p := platformString(*m.Platform)
				t.Platforms = append(t.Platforms, p)
				if !withConfig || (len(platforms) > 0 && !matchPlatform(platforms, p)) {
					continue
				}
				img, err := idx.Image(m.Digest)
				if err != nil {
					return cached{}, classify(ctx, err)
				}
				cf, err := img.ConfigFile()
				if err != nil {
					return cached{}, classify(ctx, err)
				}
				if cf.Created.After(t.Created) {
					t.Created = cf.Created.Time
				}
			}
			return cached{meta: t, isTag: true}, nil
		}
		if !desc.MediaType.IsImage() {
			return cached{}, errorf(ErrRegistry, "%s: media type %q is not an image", ref.Name(), desc.MediaType)
		}
		if withConfig || len(platforms) > 0 {
			img, err := desc.Image()
			if err != nil {
				return cached{}, classify(ctx, err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				return cached{}, classify(ctx, err)
			}
			t.Created = cf.Created.Time
			t.Platforms = []string{platformString(v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant})}
		}
		return cached{meta: t, isTag: true}, nil
	})
	if err != nil {
		return Tag{}, err
	}
	return c.meta, nil
}

func platformString(p v1.Platform) string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}

// matchPlatform reports whether have is one of want; a wanted
// "os/arch" without variant matches every variant.
func matchPlatform(want []string, have string) bool {
	for _, w := range want {
		if w == have || (len(w) < len(have) && have[:len(w)+1] == w+"/") {
			return true
		}
	}
	return false
}

// errRateLimit: waiting for the registry's rate limit would outlast the
// call's deadline.
var errRateLimit = errors.New("the rate limit")

// classify turns a go-containerregistry error into one of this package's
// classes. Messages keep the registry's status code, never a credential
// (go-containerregistry never puts one in an error).
func classify(ctx context.Context, err error) error {
	if errors.Is(err, errRateLimit) {
		return errorf(ErrTimeout, "waiting for %s", trim(err.Error(), 200))
	}
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return errorf(ErrTimeout, "registry did not answer in time")
	}
	var te *transport.Error
	if errors.As(err, &te) {
		return errorf(ErrRegistry, "HTTP %d: %s", te.StatusCode, trim(te.Error(), 200))
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return errorf(ErrTimeout, "registry did not answer in time")
	}
	return errorf(ErrRegistry, "%s", trim(err.Error(), 200))
}

func trim(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
