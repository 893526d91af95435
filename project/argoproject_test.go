package project

import (
	"bytes"
	"errors"
	"testing"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/internal/argodocs"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// argoProject is docs/operator-manual/project.yaml of Argo CD's current
// release, as it ships.
func argoProject(t *testing.T) *v1alpha1.AppProject {
	t.Helper()
	ps, err := v1alpha1.LoadProjects(bytes.NewReader(argodocs.ForTest(t).MustReadFile(t, "docs/operator-manual/project.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	return &ps[0]
}

// TestArgoProjectRules applies Argo CD's documented project to objects of
// an app deploying to guestbook: Namespaces are allowed but those named
// kube-* (clusterResourceBlacklist by name), Deployments and StatefulSets
// only (namespaceResourceWhitelist), in guestbook and guestbook-* only;
// each refusal says what Argo CD's controller says.
func TestArgoProjectRules(t *testing.T) {
	p := argoProject(t)
	dest := v1alpha1.ApplicationDestination{Server: v1alpha1.KubernetesInternalAPIServerAddr, Namespace: "guestbook"}
	for _, c := range []struct {
		yaml       string
		namespaced bool
		rule, msg  string // "" = allowed
	}{
		{"apiVersion: v1\nkind: Namespace\nmetadata: {name: guestbook-dev}\n", false, "", ""},
		{"apiVersion: v1\nkind: Namespace\nmetadata: {name: kube-extra}\n", false, "clusterResourceBlacklist", "resource :Namespace is not permitted in project my-project"},
		{"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\n", false, "clusterResourceWhitelist", "resource rbac.authorization.k8s.io:ClusterRole is not permitted in project my-project"},
		{"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n", true, "", ""},
		{"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: guestbook-db}\n", true, "", ""},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", true, "namespaceResourceWhitelist", "resource :ConfigMap is not permitted in project my-project"},
		{"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\n", true, "destinations", "namespace default is not permitted in project 'my-project'"},
	} {
		o := obj(t, c.yaml)
		err := CheckObject(p, dest, o, c.namespaced)
		var pe *PolicyError
		switch {
		case c.rule == "" && err != nil:
			t.Errorf("%s %s: refused: %v", o.GetKind(), o.GetName(), err)
		case c.rule != "" && (!errors.As(err, &pe) || pe.Rule != c.rule || err.Error() != c.msg || !errors.Is(err, ErrPolicy)):
			t.Errorf("%s %s: %v (rule %v), want %q (%s)", o.GetKind(), o.GetName(), err, pe, c.msg, c.rule)
		}
	}
	app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{
		Source:      &v1alpha1.ApplicationSource{RepoURL: "https://git.example.com/guestbook.git"},
		Destination: v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: "kube-system"},
	}}
	want := "application destination server 'in-cluster' and namespace 'kube-system' do not match any of the allowed destinations in project 'my-project'"
	if err := CheckApplication(p, app); err == nil || err.Error() != want {
		t.Errorf("destination kube-system: %v, want %q", err, want)
	}
	// The cluster the app names, known by its server too: Argo CD's
	// message names it as the app does.
	if err := CheckApplicationOn(p, app, "https://10.0.0.1:6443", "in-cluster"); err == nil || err.Error() != want {
		t.Errorf("destination kube-system on a resolved cluster: %v, want %q", err, want)
	}
	app.Spec.Destination = v1alpha1.ApplicationDestination{Server: v1alpha1.KubernetesInternalAPIServerAddr, Namespace: "guestbook"}
	if err := CheckApplicationOn(p, app, v1alpha1.KubernetesInternalAPIServerAddr, "in-cluster"); err != nil {
		t.Errorf("guestbook on in-cluster: %v", err)
	}
	p.Spec.Destinations = []v1alpha1.ApplicationDestination{{Name: "in-cluster", Namespace: "guestbook"}}
	if err := CheckApplication(p, app); err == nil {
		t.Error("a destination by name matched an app giving only the server")
	}
	if err := CheckApplicationOn(p, app, v1alpha1.KubernetesInternalAPIServerAddr, "in-cluster"); err != nil {
		t.Errorf("a destination by name, the app giving the server of that cluster: %v", err)
	}
	p = argoProject(t)
	p.Spec.SourceRepos = []string{"https://git.example.com/team/*"}
	app.Spec.Destination.Namespace = "guestbook"
	want = "application repo https://git.example.com/guestbook.git is not permitted in project 'my-project'"
	if err := CheckApplication(p, app); err == nil || err.Error() != want {
		t.Errorf("source repository: %v, want %q", err, want)
	}
}

// TestClusterResourceListed: an entry without a name matches every name;
// one with a name matches it as path.Match does.
func TestClusterResourceListed(t *testing.T) {
	list := []v1alpha1.ClusterResourceRestrictionItem{
		{Group: "", Kind: "Namespace", Name: "team1-*"},
		{Group: "rbac.authorization.k8s.io", Kind: "*"},
	}
	for _, c := range []struct {
		group, kind, name string
		want              bool
	}{
		{"", "Namespace", "team1-dev", true},
		{"", "Namespace", "team2-dev", false},
		{"rbac.authorization.k8s.io", "ClusterRole", "anything", true},
		{"", "PersistentVolume", "team1-pv", false},
	} {
		if got := ClusterResourceListed(list, schema.GroupKind{Group: c.group, Kind: c.kind}, c.name); got != c.want {
			t.Errorf("%s:%s %s: %v, want %v", c.group, c.kind, c.name, got, c.want)
		}
	}
	bad := []v1alpha1.ClusterResourceRestrictionItem{{Kind: "Namespace", Name: "team-[a"}}
	if ClusterResourceListed(bad, schema.GroupKind{Kind: "Namespace"}, "team-a") {
		t.Error("a name pattern path.Match cannot read matched")
	}
}

// TestScopedClusters: the clusters scoped to a project add their implicit
// destinations; permitOnlyProjectScopedClusters lets apps reach those
// clusters only, with Argo CD's message otherwise.
func TestScopedClusters(t *testing.T) {
	p := argoProject(t)
	scoped := []ScopedCluster{
		{Name: "staging", Server: "https://staging.example.com"},
		{Name: "prod", Server: "https://prod.example.com", Namespaces: []string{"shop", "pay"}},
	}
	if WithScopedClusters(p, nil) != p {
		t.Error("without scoped clusters the project is not returned as it is")
	}
	v := WithScopedClusters(p, scoped)
	if len(p.Spec.Destinations) != 2 || len(v.Spec.Destinations) != 5 {
		t.Fatalf("destinations: %d of the project, %d with its clusters", len(p.Spec.Destinations), len(v.Spec.Destinations))
	}
	for _, d := range []struct {
		server, ns string
		ok         bool
	}{
		{"https://staging.example.com", "anything", true},
		{"https://prod.example.com", "shop", true},
		{"https://prod.example.com", "other", false},
	} {
		if err := CheckDestination(v, d.server, "", d.ns); (err == nil) != d.ok {
			t.Errorf("%s %s: %v, want allowed %v", d.server, d.ns, err, d.ok)
		}
	}
	for _, d := range []struct {
		name, ns string
		ok       bool
	}{{"staging", "anything", true}, {"prod", "pay", true}, {"prod", "other", false}} {
		if err := CheckDestination(v, "", d.name, d.ns); (err == nil) != d.ok {
			t.Errorf("cluster %s %s: %v, want allowed %v", d.name, d.ns, err, d.ok)
		}
	}

	dest := v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: "guestbook"}
	if err := CheckScopedCluster(p, nil, dest, v1alpha1.KubernetesInternalAPIServerAddr, "in-cluster"); err != nil {
		t.Errorf("permitOnlyProjectScopedClusters false: %v", err)
	}
	p.Spec.PermitOnlyProjectScopedClusters = true
	var pe *PolicyError
	err := CheckScopedCluster(p, scoped, dest, v1alpha1.KubernetesInternalAPIServerAddr, "in-cluster")
	want := "application destination server 'in-cluster' and namespace 'guestbook' do not match any of the allowed destinations in project 'my-project'"
	if !errors.As(err, &pe) || pe.Rule != "permitOnlyProjectScopedClusters" || err.Error() != want {
		t.Errorf("an unscoped cluster: %v, want %q", err, want)
	}
	dest = v1alpha1.ApplicationDestination{Server: v1alpha1.KubernetesInternalAPIServerAddr, Namespace: "guestbook"}
	err = CheckScopedCluster(p, scoped, dest, v1alpha1.KubernetesInternalAPIServerAddr, "in-cluster")
	if want := "application destination server 'https://kubernetes.default.svc' and"; err == nil || err.Error()[:len(want)] != want {
		t.Errorf("an unscoped cluster named by server: %v", err)
	}
	in := append(scoped, ScopedCluster{Name: "in-cluster", Server: v1alpha1.KubernetesInternalAPIServerAddr})
	if err := CheckScopedCluster(p, in, dest, v1alpha1.KubernetesInternalAPIServerAddr, "in-cluster"); err != nil {
		t.Errorf("a scoped cluster: %v", err)
	}
}
