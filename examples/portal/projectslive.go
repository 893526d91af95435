package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	gosync "sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
)

// appProjectsResource is where the AppProjects of a namespace are served.
var appProjectsResource = schema.GroupVersionResource{Group: v1alpha1.Group, Version: v1alpha1.Version, Resource: "appprojects"}

// liveProjects are the AppProjects of a namespace of the cluster
// (--projects-namespace), as Argo CD reads its own: the engine's projects
// (gitops.Engine.Settings().SetProjects) and, with argocd-rbac-cm, the roles and
// project tokens RBAC honours, both replaced at each change.
type liveProjects struct {
	ns  string
	dyn dynamic.Interface
	// mu makes each read of the store and the setting of its projects one
	// step, so that a read made earlier never overwrites a later one.
	mu gosync.Mutex
}

// load lists the AppProjects of the namespace. A project that does not
// load (a field the engine does not implement, a bad value) is refused by
// name (refused, for gitops.Engine.Settings().SetProjects): the apps naming it fail
// with the reason.
func (l *liveProjects) load(ctx context.Context) (projects []gitops.Project, refused map[string]error, err error) {
	list, err := l.dyn.Resource(appProjectsResource).Namespace(l.ns).List(ctx, metav1.ListOptions{})
	if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
		return nil, nil, fmt.Errorf("--projects-namespace %s: appprojects.argoproj.io is not served by the cluster: %w", l.ns, err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("--projects-namespace %s: list AppProjects: %w", l.ns, err)
	}
	objs := make([]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		objs[i] = &list.Items[i]
	}
	projects, refused = decodeProjects(objs)
	return projects, refused, nil
}

// decodeProjects reads AppProjects with the model's strict loader, sorted
// by name; the ones that do not load are returned by name with why.
func decodeProjects(objs []*unstructured.Unstructured) ([]gitops.Project, map[string]error) {
	sort.Slice(objs, func(i, j int) bool { return objs[i].GetName() < objs[j].GetName() })
	var projects []gitops.Project
	refused := map[string]error{}
	for _, u := range objs {
		data, err := json.Marshal(u.Object)
		if err == nil {
			var ps []gitops.Project
			if ps, err = gitops.LoadProjects(bytes.NewReader(data)); err == nil && len(ps) == 1 {
				projects = append(projects, ps[0])
				continue
			}
		}
		refused[u.GetName()] = fmt.Errorf("AppProject %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	return projects, refused
}

// watch gives the engine and az (nil without argocd-rbac-cm) the
// AppProjects of the namespace each time one changes, until ctx ends:
// a role's policy, groups or jwtTokens changed decide the next request
// (a token whose entry is removed is refused from then on), without a
// restart. What does not load is reported to log by name.
func (l *liveProjects) watch(ctx context.Context, e *gitops.Engine, az *argoRBAC, log io.Writer) {
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(l.dyn, 0, l.ns, nil)
	inf := f.ForResource(appProjectsResource).Informer()
	apply := func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		var objs []*unstructured.Unstructured
		for _, o := range inf.GetStore().List() {
			if u, ok := o.(*unstructured.Unstructured); ok {
				objs = append(objs, u)
			}
		}
		projects, refused := decodeProjects(objs)
		for name, err := range refused {
			fmt.Fprintf(log, "portal: --projects-namespace %s: AppProject %s refused: %v\n", l.ns, name, err)
		}
		e.Settings().SetProjects(projects, refused)
		if az != nil {
			if err := az.setProjects(projects); err != nil {
				fmt.Fprintf(log, "portal: --projects-namespace %s: %v\n", l.ns, err)
			}
		}
	}
	// Until the first list is whole, the store holds some projects only:
	// giving those would take the others away for a moment. The projects
	// read at start serve until then; one apply follows the sync.
	changed := func() {
		if inf.HasSynced() {
			apply()
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { changed() },
		UpdateFunc: func(_, _ any) { changed() },
		DeleteFunc: func(any) { changed() },
	})
	f.Start(ctx.Done())
	if cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		apply()
	}
	<-ctx.Done()
	f.Shutdown()
}
