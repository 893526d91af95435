package cache

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kubegitops/gitops/resource"
)

// Many writers create, re-own, re-track and delete ConfigMaps while the
// cache watches; afterwards every index must match what the server holds.
func TestIndexesCorrectAfterChurn(t *testing.T) {
	const owners, children, writers, opsPerWriter = 20, 200, 8, 150
	cs, _ := clients(t, cluster.Config())
	ns := cluster.TestNamespace(t)
	ctx := testCtx(t)
	c := startCache(t, cluster.Config(), func(o *cacheSetup) { o.Namespaces = []string{ns} })

	ownerUIDs := make([]types.UID, owners)
	for i := range owners {
		cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("owner-%d", i)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ownerUIDs[i] = cm.UID
	}
	apps := []string{"", "red", "green", "blue"}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for range opsPerWriter {
				name := fmt.Sprintf("child-%d", rng.IntN(children))
				if err := churnOnce(ctx, cs, ns, name, rng, apps, ownerUIDs); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// The server's truth, read once the writers are done.
	list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantKeys := []resource.Key{}
	wantApp := map[string][]string{}
	wantChildren := map[types.UID][]resource.Key{}
	rvs := map[resource.Key]string{}
	for i := range list.Items {
		cm := &list.Items[i]
		k := cmKey(ns, cm.Name)
		wantKeys = append(wantKeys, k)
		rvs[k] = cm.ResourceVersion
		if id, ok := cm.Annotations[resource.AnnotationTrackingID]; ok {
			parsed, _ := resource.ParseTrackingID(id)
			wantApp[parsed.App] = append(wantApp[parsed.App], cm.Name)
		}
		for _, o := range cm.OwnerReferences {
			wantChildren[o.UID] = append(wantChildren[o.UID], k)
		}
	}
	sortKeys(wantKeys)
	waitFor(t, 30*time.Second, "cache converged on the server's state", func() bool {
		got := c.Namespace(ns)
		if !reflect.DeepEqual(got, wantKeys) {
			return false
		}
		for k, rv := range rvs {
			o, ok := c.Get(k)
			if !ok || o.GetResourceVersion() != rv {
				return false
			}
		}
		return true
	})
	for _, app := range apps[1:] {
		var got []string
		for _, o := range c.Managed(app) {
			if o.GetNamespace() == ns {
				got = append(got, o.GetName())
			}
		}
		want := wantApp[app]
		sort.Strings(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Managed(%s) = %v, want %v", app, got, want)
		}
	}
	for i, uid := range ownerUIDs {
		want := wantChildren[uid]
		sortKeys(want)
		got := c.Children(cmKey(ns, fmt.Sprintf("owner-%d", i)))
		if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
			t.Errorf("Children(owner-%d) = %v, want %v", i, got, want)
		}
	}
}

// churnOnce creates, updates or deletes one ConfigMap at random.
func churnOnce(ctx context.Context, cs kubernetes.Interface, ns, name string, rng *rand.Rand, apps []string, owners []types.UID) error {
	cms := cs.CoreV1().ConfigMaps(ns)
	switch rng.IntN(4) {
	case 0:
		err := cms.Delete(ctx, name, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	default:
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"n": fmt.Sprint(rng.Int())}}
		if app := apps[rng.IntN(len(apps))]; app != "" {
			cm.Annotations = map[string]string{resource.AnnotationTrackingID: resource.TrackingID{App: app, Key: cmKey(ns, name)}.String()}
		}
		if k := rng.IntN(len(owners) + 1); k < len(owners) {
			cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: fmt.Sprintf("owner-%d", k), UID: owners[k]}}
		}
		existing, err := cms.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		case err != nil:
			return err
		}
		cm.ResourceVersion = existing.ResourceVersion
		_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
}
