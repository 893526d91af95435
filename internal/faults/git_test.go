package faults

import (
	"context"
	"errors"
	"github.com/kubegitops/gitops/internal/testfiles"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/health"
	"github.com/kubegitops/gitops/internal/gitserver"
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/git"
)

const (
	// gitPassword is in the app's repository URL; it must never come out.
	gitPassword = "s3cr3t-Pa55word-never-shown"
	// gitTimeout is the Git source's timeout per network operation.
	gitTimeout = 2 * time.Second
)

const shopManifests = testfiles.WebApp

// gitFixture is a running engine with one automated app from a real Git
// server, reached at repoURL (with a user and password in it).
type gitFixture struct {
	engine  *gitops.Engine
	app     *gitops.Application
	repoURL string
	// redacted is repoURL without its credentials.
	redacted string
	logs     *logBuffer
	good     appstatus.Status
}

// startGitApp serves a repository from a real Git server, points an
// engine at it through addr (host:port: the server's own, or a proxy in
// front of it) and runs the engine until the app is Synced and Healthy.
func startGitApp(t *testing.T, gs *gitserver.Server, addr string) *gitFixture {
	t.Helper()
	ctx := context.Background()
	if _, err := gs.CreateRepository(ctx, "shop", fstest.MapFS{"app/web.yaml": {Data: []byte(shopManifests)}}); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(gs.RepoURL("shop"))
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	redacted := u.String()
	u.User = url.UserPassword("deploy", gitPassword)
	f := &gitFixture{repoURL: u.String(), redacted: redacted, logs: &logBuffer{}}

	src, err := git.New(git.Options{
		CacheDir: t.TempDir(),
		Timeout:  gitTimeout,
		// Every refresh asks the server, so the fault is met at once.
		ResolveTTL: 0,
		Logger:     f.logs.logger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	f.engine = newEngine(t, nil, func(o *gitops.Options) {
		o.SourceFor = func(string) (source.Source, error) { return src, nil }
		o.Log = f.logs.logger()
		o.Interval = time.Hour // refreshes come from Hint, when the test says
	})
	ns := cluster.TestNamespace(t)
	f.app = newApp(ns, f.repoURL, ns)
	f.app.Spec.Source.TargetRevision = gs.Branch()
	f.app.Spec.SyncPolicy = &gitops.SyncPolicy{Automated: &gitops.SyncPolicyAutomated{}}

	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- f.engine.Run(runCtx, []gitops.Application{*f.app}) }()
	t.Cleanup(func() { stop(); <-ran })

	waitFor(t, 2*time.Minute, "the app Synced and Healthy from Git", func() bool {
		st, ok := f.engine.Apps().AppStatus(v1alpha1.KeyOf(f.app))
		if ok && st.Sync == appstatus.Synced && st.Health.Code == health.Healthy {
			f.good = st
			return true
		}
		if !ok {
			return false
		}
		f.engine.Apps().Hint(f.repoURL) // after the automated sync, look again
		return false
	})
	if len(f.good.Resources) != 2 || f.good.Revision == "" {
		t.Fatalf("good status: %+v", f.good)
	}
	return f
}

// checkFailure checks a refresh's failure: within the timeout (plus
// margin), a *source.Error naming the repository without credentials, and
// what is wanted of its cause.
func (f *gitFixture) checkFailure(t *testing.T, want func(error) bool, what string) {
	t.Helper()
	start := time.Now()
	_, err := f.engine.Refresh(context.Background(), f.app)
	took := time.Since(start)
	t.Logf("refresh failed after %s: %v", took.Round(time.Millisecond), err)
	if took > gitTimeout+3*time.Second {
		t.Errorf("refresh took %s with a %s source timeout", took, gitTimeout)
	}
	var serr *source.Error
	if !errors.As(err, &serr) {
		t.Fatalf("refresh error %v (%T) is not a *source.Error", err, err)
	}
	if serr.Repository != f.redacted {
		t.Errorf("source error names %q, want %q", serr.Repository, f.redacted)
	}
	if !want(err) {
		t.Errorf("refresh error %v: want %s", err, what)
	}
	if strings.Contains(err.Error(), gitPassword) {
		t.Errorf("the password is in the error: %v", err)
	}
}

// checkKeptStatus waits for the running engine to record the failure and
// checks that it says Unknown (it cannot compare), kept the last good
// revision, health and resources, and reported the failure as a
// ComparisonError naming the repository, with the password nowhere.
func (f *gitFixture) checkKeptStatus(t *testing.T) {
	t.Helper()
	f.engine.Apps().Hint(f.repoURL)
	var st appstatus.Status
	waitFor(t, time.Minute, "the running engine to report the failed refresh", func() bool {
		var ok bool
		st, ok = f.engine.Apps().AppStatus(v1alpha1.KeyOf(f.app))
		for _, c := range st.Conditions {
			if ok && c.Type == appstatus.ConditionComparisonError {
				return true
			}
		}
		return false
	})
	// Argo CD says Unknown when it cannot compare; revision, health and
	// resources stay the last good ones.
	if st.Sync != appstatus.Unknown || st.Health.Code != f.good.Health.Code || st.Revision != f.good.Revision {
		t.Errorf("status after the failure: sync %s health %s revision %s; want sync Unknown and the last good %s %s",
			st.Sync, st.Health.Code, st.Revision, f.good.Health.Code, f.good.Revision)
	}
	if !reflect.DeepEqual(st.Resources, f.good.Resources) {
		t.Errorf("resources after the failure:\n%+v\nthe last good:\n%+v", st.Resources, f.good.Resources)
	}
	found := false
	for _, c := range st.Conditions {
		if c.Type == appstatus.ConditionComparisonError && strings.Contains(c.Message, f.redacted) {
			found = true
		}
		if strings.Contains(c.Message, gitPassword) {
			t.Errorf("the password is in a condition: %s", c.Message)
		}
	}
	if !found {
		t.Errorf("no ComparisonError naming %s in %+v", f.redacted, st.Conditions)
	}
	logs := f.logs.String()
	if strings.Contains(logs, gitPassword) {
		t.Errorf("the password is in the logs:\n%s", logs)
	}
	if !strings.Contains(logs, "refresh failed") || !strings.Contains(logs, f.redacted) {
		t.Errorf("the failed refresh is not logged with its repository:\n%s", logs)
	}
}

// The Git server goes down (connections refused) after a good refresh: a
// refresh fails at once with a *source.Error for the repository, and the
// running engine keeps the last good status with the failure as a
// ComparisonError. The repository URL carries a password, which appears in
// no error, condition or log line.
func TestGitServerDown(t *testing.T) {
	gs := testfiles.GitServer(t, gitserver.DefaultOptions())
	addr := strings.TrimPrefix(gs.URL(), "http://")
	f := startGitApp(t, gs, addr)
	if err := gs.Close(); err != nil {
		t.Fatal(err)
	}
	f.checkFailure(t, func(err error) bool {
		return errors.Is(err, source.ErrUnavailable) && strings.Contains(err.Error(), "connection refused")
	}, "source.ErrUnavailable (connection refused)")
	f.checkKeptStatus(t)
}

// The Git server hangs (accepts connections, never answers) after a good
// refresh: a refresh fails with source.ErrTimeout within the source's
// timeout, and the running engine keeps the last good status, as when the
// server is down.
func TestGitServerHung(t *testing.T) {
	gs := testfiles.GitServer(t, gitserver.DefaultOptions())
	proxy := startHangingProxy(t, strings.TrimPrefix(gs.URL(), "http://"))
	f := startGitApp(t, gs, proxy.Addr())
	proxy.hang()
	f.checkFailure(t, func(err error) bool { return errors.Is(err, source.ErrTimeout) }, "errors.Is source.ErrTimeout")
	f.checkKeptStatus(t)
}
