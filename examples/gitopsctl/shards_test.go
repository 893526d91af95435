package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/examples/operator/config"
	"github.com/kubegitops/gitops/shard"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestShardsListsMembers runs `gitopsctl shards` on a namespace where two
// replicas hold their Leases (one live through package shard, one whose
// Lease expired) and Applications name their owners: each member is listed
// with its state, heartbeat and app count, the expired one as expired,
// and the apps without an owner are counted; the numbers claimed in Argo
// CD's argocd-app-controller-shard-cm are listed fresh, stale or free.
func TestShardsListsMembers(t *testing.T) {
	ns := cluster.TestNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	scheme := runtime.NewScheme()
	if err := errors.Join(apiextensionsv1.AddToScheme(scheme), v1alpha1.AddToScheme(scheme), coordinationv1.AddToScheme(scheme), corev1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := config.Install(ctx, c, time.Minute); err != nil {
		t.Fatal(err)
	}

	opts := shard.DefaultOptions()
	opts.Namespace, opts.Group, opts.Identity = ns, "ops", "live-0"
	m, err := shard.New(cluster.Config(), opts)
	if err != nil {
		t.Fatal(err)
	}
	mctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(mctx) }()
	defer func() { stop(); <-done }()
	old := metav1.NewMicroTime(time.Now().Add(-time.Hour))
	gone := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ops-gone-1", Labels: map[string]string{shard.LabelGroup: "ops"}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("gone-1"), LeaseDurationSeconds: ptr.To[int32](15), RenewTime: &old}}
	if err := c.Create(ctx, gone); err != nil {
		t.Fatal(err)
	}
	claims := fmt.Sprintf(`[{"ShardNumber":1,"ControllerName":"argocd-application-controller-7d9f","HeartbeatTime":%q},`+
		`{"ShardNumber":0,"ControllerName":"argocd-application-controller-5c2a","HeartbeatTime":%q},{"ShardNumber":2,"ControllerName":"","HeartbeatTime":null}]`,
		time.Now().Add(-2*time.Minute).UTC().Format(time.RFC3339), time.Now().UTC().Format(time.RFC3339))
	if err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: shard.ShardConfigMapName}, Data: map[string]string{shard.ShardMappingKey: claims}}); err != nil {
		t.Fatal(err)
	}
	for i, owner := range []string{"live-0", "live-0", "gone-1", ""} {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app" + string(rune('a'+i))}, Spec: v1alpha1.ApplicationSpec{
			Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: "https://example.com/repo.git", Path: "."},
			Destination: v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: ns},
		}}
		if owner != "" {
			app.Annotations = map[string]string{shard.AnnotationOwner: owner}
		}
		if err := c.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	if err := waitUntil(ctx, time.Minute, func() (bool, error) {
		var l coordinationv1.Lease
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ops-live-0"}, &l)
		return err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity == "live-0", nil
	}); err != nil {
		t.Fatalf("the live member's Lease never appeared: %v", err)
	}

	code, stdout, stderr := runCLI(t, "shards", "--kubeconfig", cluster.Kubeconfig(), "--namespace", ns)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^GROUP\s+MEMBER\s+STATE\s+HEARTBEAT\s+APPS\s+LEASE$`),
		regexp.MustCompile(`(?m)^ops\s+live-0\s+live\s+\d+s ago\s+2\s+ops-live-0$`),
		regexp.MustCompile(`(?m)^ops\s+gone-1\s+expired\s+1h0m\d+s ago\s+1\s+ops-gone-1$`),
		regexp.MustCompile(`(?m)^applications: 4, without an owner annotation: 1$`),
		// Argo CD's claims, by number: fresh, stale (two minutes without a
		// heartbeat, three of 10 s allowed), free.
		regexp.MustCompile(`(?m)^dynamic cluster distribution \(argocd-app-controller-shard-cm, stale after 30s without a heartbeat\):\nSHARD\s+CONTROLLER\s+HEARTBEAT\s+CLAIM\n0\s+argocd-application-controller-5c2a\s+\d+s ago\s+fresh\n1\s+argocd-application-controller-7d9f\s+2m\d+s ago\s+stale\n2\s+-\s+never\s+free$`),
	} {
		if !want.MatchString(stdout) {
			t.Errorf("output does not match %s:\n%s", want, stdout)
		}
	}
	if strings.Index(stdout, "live-0") > strings.Index(stdout, "gone-1") {
		t.Errorf("live members are not listed first:\n%s", stdout)
	}
}

// TestShardsShowsClusterPlacement runs `gitopsctl shards` on a namespace
// whose replicas are named as Argo CD's StatefulSet names them and whose
// argocd-cmd-params-cm says round-robin: each cluster is listed with its
// replica, that replica's member and its apps, as the operators place
// them (in-cluster first by ID on 0, the Secret's cluster on 1); a shard
// field moves the cluster.
func TestShardsShowsClusterPlacement(t *testing.T) {
	ns := cluster.TestNamespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	scheme := runtime.NewScheme()
	if err := errors.Join(apiextensionsv1.AddToScheme(scheme), v1alpha1.AddToScheme(scheme), coordinationv1.AddToScheme(scheme), corev1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := config.Install(ctx, c, time.Minute); err != nil {
		t.Fatal(err)
	}
	now := metav1.NewMicroTime(time.Now())
	for i := range 2 {
		id := fmt.Sprintf("argocd-application-controller-%d", i)
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gitops-operator-" + id, Labels: map[string]string{shard.LabelGroup: "gitops-operator"}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(id), LeaseDurationSeconds: ptr.To[int32](600), RenewTime: &now}}
		if err := c.Create(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	objs := []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "argocd-cmd-params-cm"}, Data: map[string]string{"controller.sharding.algorithm": "round-robin"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "second", Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster"}},
			StringData: map[string]string{"name": "second", "server": "https://second.example:6443", "config": `{"tlsClientConfig":{"insecure":true}}`}},
	}
	for i, dest := range []string{"in-cluster", "second", "second"} {
		objs = append(objs, &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("app%d", i)}, Spec: v1alpha1.ApplicationSpec{
			Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: "https://example.com/repo.git", Path: "."},
			Destination: v1alpha1.ApplicationDestination{Name: dest, Namespace: ns},
		}})
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	check := func(wants ...string) {
		t.Helper()
		code, stdout, stderr := runCLI(t, "shards", "--kubeconfig", cluster.Kubeconfig(), "--namespace", ns)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		for _, want := range wants {
			if !regexp.MustCompile(want).MatchString(stdout) {
				t.Errorf("output does not match %s:\n%s", want, stdout)
			}
		}
	}
	check(`(?m)^clusters placed by round-robin over 2 replicas:$`,
		`(?m)^in-cluster\s+https://kubernetes.default.svc\s+0\s+argocd-application-controller-0\s+\d+$`, // apps of other tests count too
		`(?m)^second\s+https://second.example:6443\s+1\s+argocd-application-controller-1\s+2$`)
	var s corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "second"}, &s); err != nil {
		t.Fatal(err)
	}
	s.Data["shard"] = []byte("0")
	if err := c.Update(ctx, &s); err != nil {
		t.Fatal(err)
	}
	check(`(?m)^second\s+https://second.example:6443\s+0\s+argocd-application-controller-0\s+2$`)
}
