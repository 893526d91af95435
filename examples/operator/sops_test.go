package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/internal/sopsexe"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestOperatorDecryptsSops: with -sops and the age key in a Secret of its
// namespace (-sops-age-key-secret, keys.txt as KSOPS users mount it), the
// operator syncs a SOPS-encrypted Secret of Git in plaintext; an app
// whose encrypted file was changed after encryption (its MAC fails) gets a
// ComparisonError naming the file and no secret, and the other app still
// syncs.
func TestOperatorDecryptsSops(t *testing.T) {
	ctx := context.Background()
	ns, dest := cluster.TestNamespace(t), cluster.TestNamespace(t)
	bin := sopsexe.Binary(t)
	scheme := runtime.NewScheme()
	if err := errors.Join(clientgoscheme.AddToScheme(scheme), v1alpha1.AddToScheme(scheme)); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(cluster.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	keys := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sops-age"}, StringData: map[string]string{"keys.txt": sopsexe.AgeKeys}}
	if err := c.Create(ctx, keys); err != nil {
		t.Fatal(err)
	}
	good := writeRepo(t, map[string]string{"secret.enc.yaml": sopsexe.SecretYAML})
	// Changed after encryption: the MAC no longer matches.
	foreign := writeRepo(t, map[string]string{"secret.enc.yaml": strings.Replace(sopsexe.SecretYAML, "name: db", "name: other", 1)})
	startOperatorArgs(t, ns, "-interval", "1m", "-notifications=false", "-sops", bin, "-sops-age-key-secret", "sops-age")
	for name, repo := range map[string]string{"good": good, "tampered": foreign} {
		app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: "file://" + repo, Path: "app"},
			Destination: v1alpha1.ApplicationDestination{Name: "in-cluster", Namespace: dest},
			SyncPolicy:  &v1alpha1.SyncPolicy{Automated: &v1alpha1.SyncPolicyAutomated{}},
		}}
		waitUntil(t, func() string { return "create Application " + name }, func(ctx context.Context) bool {
			return c.Create(ctx, app.DeepCopy()) == nil
		})
	}
	secret := &corev1.Secret{}
	waitUntil(t, func() string { return fmt.Sprintf("Secret db in plaintext: %v", secret.Data) }, func(ctx context.Context) bool {
		return c.Get(ctx, types.NamespacedName{Namespace: dest, Name: "db"}, secret) == nil && string(secret.Data["password"]) == sopsexe.Plaintext
	})
	got := &v1alpha1.Application{}
	waitUntil(t, func() string {
		return fmt.Sprintf("tampered app: want a ComparisonError naming its file; status %+v", got.Status)
	}, func(ctx context.Context) bool {
		if c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "tampered"}, got) != nil {
			return false
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == "ComparisonError" && strings.Contains(cond.Message, "secret.enc.yaml") {
				if strings.Contains(cond.Message, "AGE-SECRET") || strings.Contains(cond.Message, sopsexe.Plaintext) {
					t.Fatalf("the condition holds a secret: %s", cond.Message)
				}
				return true
			}
		}
		return false
	})
	waitUntil(t, func() string { return fmt.Sprintf("good app Synced: %+v", got.Status) }, func(ctx context.Context) bool {
		return c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "good"}, got) == nil && got.Status.Sync.Status == "Synced"
	})
}
