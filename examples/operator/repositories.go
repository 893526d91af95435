package main

import (
	"context"
	"sort"
	"sync"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops/source/repocreds"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// ReasonInvalidRepositorySecret is the reason of the Warning Event
// written on a repository or repo-creds Secret that was left out (it has
// no url); the message names the Secret and the field, never a value.
const ReasonInvalidRepositorySecret = "InvalidRepositorySecret"

// ReasonRepositorySecretField is the reason of the Warning Event written
// once on a repository Secret that is served but has a field without
// effect here (a misspelt or unknown one, one Argo CD does not read on
// that kind of Secret, one another Argo CD component owns), a malformed
// one (the apps of its repositories are then refused with a condition
// naming it). The message names the Secret and the field, never a value.
const ReasonRepositorySecretField = "RepositorySecretField"

// repoSecrets keeps the engine's credentials (Options.ProjectCredentials
// reads the live set, so a Secret with a project field serves the apps of
// that project only) equal to Argo CD's repository and repo-creds Secrets of
// the operator's namespace and its argocd-tls-certs-cm and
// argocd-ssh-known-hosts-cm: each change of one of them reads them all
// again, so the next refresh of an app uses the credentials as they are
// now, without a restart.
type repoSecrets struct {
	kube      kubernetes.Interface
	live      *repocreds.Live
	recorder  record.EventRecorder
	namespace string
	log       logr.Logger
	// opts read every load: the process's Azure workload identity and a
	// token cache kept across loads.
	opts repocreds.Options
	// reported are the Events written, by Secret UID and message, so
	// that each is written once, not at every load.
	mu       sync.Mutex
	reported map[string]bool
}

// newRepoSecrets returns the reader of namespace's repository Secrets.
func newRepoSecrets(kube kubernetes.Interface, live *repocreds.Live, namespace string, log logr.Logger) *repoSecrets {
	opts := repocreds.DefaultOptions()
	opts.Tokens = repocreds.NewTokenCache()
	return &repoSecrets{kube: kube, live: live, namespace: namespace, log: log.WithName("repositories"), opts: opts, reported: map[string]bool{}}
}

// loadRepoSecrets reads the namespace's repository Secrets into live once,
// before the engine starts, so that the first refreshes already have
// them; a Secret that cannot be read is logged by name (and reported as
// an Event once the watch runs).
func loadRepoSecrets(ctx context.Context, kube kubernetes.Interface, namespace string, log logr.Logger) (*repocreds.Live, error) {
	r := newRepoSecrets(kube, &repocreds.Live{}, namespace, log)
	if err := r.load(ctx); err != nil {
		return nil, err
	}
	return r.live, nil
}

// setupRepoSecrets watches the repository Secrets and the two ConfigMaps
// of f.namespace, keeping live current.
func setupRepoSecrets(mgr manager.Manager, kube kubernetes.Interface, live *repocreds.Live, f flags, log logr.Logger) error {
	r := newRepoSecrets(kube, live, f.namespace, log)
	r.recorder = mgr.GetEventRecorderFor("gitops-operator")
	isRepoSecret := predicate.NewPredicateFuncs(func(o client.Object) bool {
		switch o.GetLabels()[repocreds.SecretTypeLabel] {
		case repocreds.TypeRepository, repocreds.TypeRepoCreds, repocreds.TypeRepositoryWrite, repocreds.TypeRepoWriteCreds:
			return o.GetNamespace() == f.namespace
		}
		return false
	})
	isRepoConfig := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == f.namespace && (o.GetName() == repocreds.TLSCertsConfig || o.GetName() == repocreds.KnownHostsConfig)
	})
	return ctrl.NewControllerManagedBy(mgr).Named("repositorysecrets").
		WithOptions(crcontroller.Options{NeedLeaderElection: f.everyReplica()}).
		For(&corev1.Secret{}, builder.WithPredicates(isRepoSecret)).
		Watches(&corev1.ConfigMap{}, &handler.EnqueueRequestForObject{}, builder.WithPredicates(isRepoConfig)).
		Complete(r)
}

// Reconcile reads every repository Secret again (any one changed) and
// replaces the live set: a Secret that cannot be read (no url) is left
// out and named in a Warning Event on it; the others are served, each
// field without effect or malformed named once in a Warning Event.
func (r *repoSecrets) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	return ctrl.Result{}, r.load(ctx)
}

// load lists the Secrets and ConfigMaps and replaces the live set.
func (r *repoSecrets) load(ctx context.Context) error {
	store, bad, err := repocreds.LoadNamespaceWith(ctx, r.kube, r.namespace, r.opts)
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(bad))
	for id := range bad {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		r.report(ctx, id, ReasonInvalidRepositorySecret, bad[id].Error())
	}
	for _, w := range store.Warnings() {
		r.report(ctx, w.Secret, ReasonRepositorySecretField, w.String())
	}
	r.live.Set(store)
	r.log.V(1).Info("repository credentials loaded", "store", store.String())
	return nil
}

// report logs msg about Secret id and writes it as a Warning Event on
// the Secret, once per Secret (UID) and message.
func (r *repoSecrets) report(ctx context.Context, id, reason, msg string) {
	ref := r.secretRef(ctx, id)
	key := string(ref.UID) + "\x00" + id + "\x00" + msg
	r.mu.Lock()
	seen := r.reported[key]
	r.reported[key] = true
	r.mu.Unlock()
	if seen {
		return
	}
	r.log.Info("repository secret: "+msg, "secret", id, "reason", reason)
	if r.recorder != nil {
		r.recorder.Event(ref, corev1.EventTypeWarning, reason, msg)
	}
}

// secretRef is the Secret namespace/name, read for its UID so that the
// Event is attached to it (a bare reference when it is gone).
func (r *repoSecrets) secretRef(ctx context.Context, id string) *corev1.Secret {
	ns, name := r.namespace, id
	for i := range id {
		if id[i] == '/' {
			ns, name = id[:i], id[i+1:]
			break
		}
	}
	if s, err := r.kube.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
		return s
	}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}
