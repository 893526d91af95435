package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/testenv"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// clusterSecret is an Argo CD cluster Secret for cfg's token and CA.
func clusterSecret(ns, name, cluster string, cfg *rest.Config) *corev1.Secret {
	config := fmt.Sprintf(`{"bearerToken":%q,"tlsClientConfig":{"insecure":false,"caData":%q}}`,
		cfg.BearerToken, base64.StdEncoding.EncodeToString(cfg.CAData))
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"argocd.argoproj.io/secret-type": "cluster"}},
		StringData: map[string]string{"name": cluster, "server": cfg.Host, "config": config},
	}
}

// admin binds a testenv user to cluster-admin on the remote cluster.
func adminBinding(user string) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user + "-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: "rbac.authorization.k8s.io", Kind: "User", Name: user}},
	}
}

// The operator deploys to a second cluster an Argo CD cluster Secret
// describes (bearer token and CA); a rotated token is used without a
// restart; a malformed Secret is reported by name and stops nothing; a
// cluster that goes down marks only its app.
func TestClusterSecretsAsDestinations(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	remote, err := testenv.Start(ctx, testenv.Options{APIServerOnly: true, Users: []testenv.User{{Name: "deployer-1"}, {Name: "deployer-2"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remote.Stop() })
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	local, err := client.New(cluster.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := client.New(remote.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"deployer-1", "deployer-2"} {
		if err := rc.Create(ctx, adminBinding(u)); err != nil {
			t.Fatal(err)
		}
	}
	dest := "remote-apps"
	if err := rc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: dest}}); err != nil {
		t.Fatal(err)
	}
	user1, err := remote.UserConfig("deployer-1")
	if err != nil {
		t.Fatal(err)
	}
	user2, err := remote.UserConfig("deployer-2")
	if err != nil {
		t.Fatal(err)
	}

	ns := cluster.TestNamespace(t)
	localDest := cluster.TestNamespace(t)
	if err := local.Create(ctx, clusterSecret(ns, "remote-cluster", "remote", user1)); err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "app", "cm.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello}\ndata: {a: b}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-kubeconfig", cluster.Kubeconfig(), "-namespace", ns, "-interval", "5s",
			"-metrics-bind-address", "0", "-health-probe-bind-address", "0", "-applicationsets=false"})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("run: %v", err)
		}
	}()
	app := func(name string, d v1alpha1.ApplicationDestination) *v1alpha1.Application {
		return &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.ApplicationSpec{
			Project: "default", Source: &v1alpha1.ApplicationSource{RepoURL: "file://" + repo, Path: "app"}, Destination: d,
			SyncPolicy: &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{SelfHeal: true}},
		}}
	}
	poll := func(what string, cond func(ctx context.Context) (bool, error)) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			select {
			case err := <-done:
				return false, errors.Join(errors.New("run ended"), err)
			default:
			}
			return cond(ctx)
		})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	for _, a := range []*v1alpha1.Application{
		app("remote", v1alpha1.ApplicationDestination{Name: "remote", Namespace: dest}),
		app("local", v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: localDest}),
	} {
		poll("create Application "+a.Name, func(ctx context.Context) (bool, error) { return local.Create(ctx, a.DeepCopy()) == nil, nil })
	}
	status := func(name string) v1alpha1.ApplicationStatus {
		got := &v1alpha1.Application{}
		_ = local.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, got)
		return got.Status
	}
	synced := func(name string) func(context.Context) (bool, error) {
		return func(context.Context) (bool, error) {
			st := status(name)
			return st.Sync.Status == "Synced" && st.Health.Status == "Healthy", nil
		}
	}
	remoteCM := func(ctx context.Context) (bool, error) {
		cm := &corev1.ConfigMap{}
		return rc.Get(ctx, types.NamespacedName{Namespace: dest, Name: "hello"}, cm) == nil && cm.Data["a"] == "b", nil
	}
	poll("remote app Synced", synced("remote"))
	poll("ConfigMap on the remote cluster", remoteCM)
	poll("local app Synced", synced("local"))

	// Rotation: the Secret now holds deployer-2's token, and deployer-1
	// loses its rights; a ConfigMap deleted on the remote cluster comes
	// back only if the engine now acts as deployer-2.
	rotated := clusterSecret(ns, "remote-cluster", "remote", user2)
	poll("rotate the Secret", func(ctx context.Context) (bool, error) {
		cur := &corev1.Secret{}
		if err := local.Get(ctx, types.NamespacedName{Namespace: ns, Name: "remote-cluster"}, cur); err != nil {
			return false, nil
		}
		cur.StringData = rotated.StringData
		return local.Update(ctx, cur) == nil, nil
	})
	if err := rc.Delete(ctx, adminBinding("deployer-1")); err != nil {
		t.Fatal(err)
	}
	if err := rc.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: dest, Name: "hello"}}); err != nil {
		t.Fatal(err)
	}
	poll("ConfigMap restored with the rotated token", remoteCM)
	poll("remote app Synced after rotation", synced("remote"))

	// A malformed Secret is named in a Warning Event; the others go on.
	broken := clusterSecret(ns, "broken-cluster", "broken", user2)
	broken.StringData["config"] = `{"awsAuthConfig":{"clusterName":"c","roleARN":"arn:aws:iam::1:role/r"}}`
	if err := local.Create(ctx, broken); err != nil {
		t.Fatal(err)
	}
	poll("Event naming the malformed Secret", func(ctx context.Context) (bool, error) {
		var evs corev1.EventList
		if err := local.List(ctx, &evs, client.InNamespace(ns)); err != nil {
			return false, nil
		}
		for _, ev := range evs.Items {
			if ev.InvolvedObject.Name == "broken-cluster" && ev.Reason == "InvalidClusterSecret" &&
				strings.Contains(ev.Message, ns+"/broken-cluster") && strings.Contains(ev.Message, "config.awsAuthConfig") {
				return true, nil
			}
		}
		return false, nil
	})
	if err := rc.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: dest, Name: "hello"}}); err != nil {
		t.Fatal(err)
	}
	poll("remote cluster still served after a malformed Secret", remoteCM)

	// A cluster that goes down marks only its app.
	if err := remote.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	poll("remote app names its unavailable cluster", func(context.Context) (bool, error) {
		for _, c := range status("remote").Conditions {
			if strings.Contains(c.Message, "cluster remote is unavailable") {
				return true, nil
			}
		}
		return false, nil
	})
	if st := status("local"); st.Sync.Status != "Synced" || len(st.Conditions) != 0 {
		t.Errorf("local app while the remote cluster is down: %+v", st)
	}
	if err := remote.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	poll("remote app Synced once its cluster is back", synced("remote"))

	// Deleting the Secret removes the destination.
	if err := local.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "remote-cluster"}}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	poll("remote app reports its cluster is no longer configured", func(context.Context) (bool, error) {
		for _, c := range status("remote").Conditions {
			if strings.Contains(c.Message, "remote is not a configured cluster") {
				return true, nil
			}
		}
		return false, nil
	})
}
