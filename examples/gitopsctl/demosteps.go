package main

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// The guestbook objects the demo changes.
const (
	guestbookApp        = "guestbook"
	guestbookDeployment = "guestbook"
	guestbookConfigMap  = "guestbook-config"
)

// selfHeal scales the guestbook Deployment by hand, as someone with kubectl
// might, and waits for the engine to put Git's replica count back.
func (d *demo) selfHeal(ctx context.Context) error {
	start := time.Now()
	d.say("Drift: scaling the guestbook Deployment to 5 replicas by hand (Git says 1)")
	ns := d.flags.prefix + "-guestbook"
	deployments := d.client.AppsV1().Deployments(ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		dep, err := deployments.Get(cctx, guestbookDeployment, metav1.GetOptions{})
		if err != nil {
			return err
		}
		five := int32(5)
		dep.Spec.Replicas = &five
		_, err = deployments.Update(cctx, dep, metav1.UpdateOptions{FieldManager: "someone-with-kubectl"})
		return err
	})
	if err != nil {
		return fmt.Errorf("scale %s/%s: %w", ns, guestbookDeployment, err)
	}
	d.note("kubectl-style update done; the engine sees the change through its watch and self-heals")
	fmt.Fprintln(d.out)
	var live *appsv1.Deployment
	err = waitUntil(ctx, time.Minute, func() (bool, error) {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		dep, err := deployments.Get(cctx, guestbookDeployment, metav1.GetOptions{})
		if err != nil {
			return false, nil // transient: keep waiting until the deadline
		}
		live = dep
		return dep.Spec.Replicas != nil && *dep.Spec.Replicas == 1 && d.appReady(guestbookApp, ""), nil
	})
	if err != nil {
		return d.explain("self-heal did not restore 1 replica", err)
	}
	fmt.Fprintln(d.out)
	d.note("self-heal restored %s/%s to %d replica (generation %d)", ns, guestbookDeployment, *live.Spec.Replicas, live.Generation)
	d.timed("drift healed", start)
	return nil
}

// rollOut commits a change to the Git repository, hints the engine (as a
// push webhook would) and waits until the change is live and healthy.
func (d *demo) rollOut(ctx context.Context) error {
	start := time.Now()
	d.say("Git change: committing replicas 1 -> 2 and a new message to guestbook/")
	files, err := demoRepository()
	if err != nil {
		return err
	}
	changes := map[string][]byte{}
	for path, edit := range map[string][2]string{
		"guestbook/deployment.yaml": {"replicas: 1", "replicas: 2"},
		"guestbook/configmap.yaml":  {"hello from git, v1", "hello from git, v2"},
	} {
		data, err := readFile(files, path)
		if err != nil {
			return err
		}
		changed, err := replaceOnce(string(data), edit[0], edit[1])
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		changes[path] = []byte(changed)
	}
	commit, err := d.git.Commit(ctx, demoRepoName, "guestbook: two replicas, message v2", changes)
	if err != nil {
		return err
	}
	d.note("pushed %s; hinting the engine as a push webhook would", shortRev(commit))
	fmt.Fprintln(d.out)
	d.engine.Apps().Hint(d.repoURL)
	ns := d.flags.prefix + "-guestbook"
	var message string
	var ready int32
	err = waitUntil(ctx, 90*time.Second, func() (bool, error) {
		if !d.appReady(guestbookApp, commit) {
			return false, nil
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		cm, err := d.client.CoreV1().ConfigMaps(ns).Get(cctx, guestbookConfigMap, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		dep, err := d.client.AppsV1().Deployments(ns).Get(cctx, guestbookDeployment, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		message, ready = cm.Data["message"], dep.Status.ReadyReplicas
		return message == "hello from git, v2" && ready == 2, nil
	})
	if err != nil {
		return d.explain("the commit was not rolled out", err)
	}
	fmt.Fprintln(d.out)
	d.note("live: ConfigMap message %q, Deployment %d/2 replicas ready, app at %s", message, ready, shortRev(commit))
	d.timed("commit rolled out", start)
	return nil
}
