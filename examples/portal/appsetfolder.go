package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"reflect"
	"sort"
	"strings"
	gosync "sync"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appset"
	"github.com/kubegitops/gitops/appset/controller"
	"github.com/kubegitops/gitops/rbac"
	"github.com/kubegitops/gitops/resource"
	sigsyaml "sigs.k8s.io/yaml"
)

// ApplicationSets in an --apps folder: a manifest file whose documents are
// all ApplicationSets is a set file. Its sets run in the portal's engine
// as Argo CD's ApplicationSet controller runs them (package
// appset/controller): their Applications are generated, served beside the
// folder's own and deployed by the engine. A generator that needs what
// only Argo CD's namespace holds (cluster Secrets, ConfigMaps, duck-typed
// resources, forge tokens) cannot run over a folder: a set using one is
// shown with the reason and not run.

// setFileError is a manifest file of the --apps folder that mixes
// ApplicationSets with other documents.
type setFileError struct{ File string }

// Error implements error.
func (e *setFileError) Error() string {
	return e.File + ": holds ApplicationSets and other documents; put the ApplicationSets in files of their own"
}

// folderGeneratorLimit says why a generator of kind cannot run over a
// folder, as the ApplicationSets page gives it; false when it can.
func folderGeneratorLimit(kind string) (string, bool) {
	switch kind {
	case "clusters":
		return "selects Argo CD cluster Secrets, which a folder does not hold (start the portal with --namespace)", true
	case "clusterDecisionResource":
		return "reads a ConfigMap and resources of Argo CD's namespace", true
	case "plugin":
		return "reads its ConfigMap and token Secret from Argo CD's namespace", true
	case "scmProvider", "pullRequest":
		return "reads its forge token from a Secret of Argo CD's namespace", true
	}
	return "", false
}

// docKinds are the kinds of the documents of a manifest file.
func docKinds(data []byte) []string {
	var kinds []string
	for _, d := range resource.SplitDocuments(data) {
		var tm struct {
			Kind string `json:"kind"`
		}
		if sigsyaml.Unmarshal(d.Body, &tm) != nil || tm.Kind == "" {
			if strings.TrimSpace(string(d.Body)) != "" {
				kinds = append(kinds, "")
			}
			continue
		}
		kinds = append(kinds, tm.Kind)
	}
	return kinds
}

// setFiles are the manifest files of dir that hold ApplicationSets only; a
// file that mixes them with other documents is a *setFileError.
func setFiles(dir string) (map[string]bool, error) {
	files, err := v1alpha1.ManifestFiles(os.DirFS(dir), ".")
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	var errs []error
	for _, f := range files {
		data, err := os.ReadFile(path.Join(dir, f))
		if err != nil {
			return nil, &v1alpha1.FileError{File: f, Err: err}
		}
		kinds := docKinds(data)
		sets := 0
		for _, k := range kinds {
			if k == v1alpha1.ApplicationSetKind {
				sets++
			}
		}
		switch {
		case sets > 0 && sets == len(kinds):
			out[f] = true
		case sets > 0:
			errs = append(errs, &setFileError{File: f})
		}
	}
	return out, errors.Join(errs...)
}

// hideFiles is a folder without some of its files.
type hideFiles struct {
	fs.FS
	hidden map[string]bool
}

// ReadDir implements fs.ReadDirFS.
func (h hideFiles) ReadDir(name string) ([]fs.DirEntry, error) {
	es, err := fs.ReadDir(h.FS, name)
	out := es[:0]
	for _, e := range es {
		if !h.hidden[path.Join(name, e.Name())] {
			out = append(out, e)
		}
	}
	return out, err
}

// loadAppSetsDir reads the ApplicationSets of the set files of dir; a set
// that does not load fails it, naming the file.
func loadAppSetsDir(dir string) ([]appset.ApplicationSet, error) {
	files, err := setFiles(dir)
	if err != nil {
		return nil, fmt.Errorf("--apps %s: %w", dir, err)
	}
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	var out []appset.ApplicationSet
	seen := map[string]string{}
	for _, f := range names {
		r, err := os.Open(path.Join(dir, f))
		if err != nil {
			return nil, fmt.Errorf("--apps %s: %s: %w", dir, f, err)
		}
		sets, err := appset.Load(r)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("--apps %s: %s: %w", dir, f, err)
		}
		for _, s := range sets {
			if prev, dup := seen[s.Name]; dup {
				return nil, fmt.Errorf("--apps %s: %s: ApplicationSet %q is defined in %s too", dir, f, s.Name, prev)
			}
			seen[s.Name] = f
			out = append(out, s)
		}
	}
	return out, nil
}

// generatorTree names every generator of gens, those nested in matrix and
// merge generators included, from their JSON form.
func generatorTree(gens []v1alpha1.ApplicationSetGenerator) []string {
	var walk func(raw json.RawMessage) []string
	walk = func(raw json.RawMessage) []string {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return []string{"unknown"}
		}
		var out []string
		for k, v := range m {
			if k == "selector" || k == "values" || k == "template" {
				continue
			}
			out = append(out, k)
			if k == "matrix" || k == "merge" {
				var nested struct {
					Generators []json.RawMessage `json:"generators"`
				}
				_ = json.Unmarshal(v, &nested) // a nested list that does not read names nothing more
				for _, g := range nested.Generators {
					out = append(out, walk(g)...)
				}
			}
		}
		return out
	}
	var out []string
	for _, g := range gens {
		b, err := json.Marshal(g)
		if err != nil {
			out = append(out, "unknown")
			continue
		}
		out = append(out, walk(b)...)
	}
	return out
}

// notRunInFolder are the reasons set cannot run over a folder, one per
// generator kind that cannot ("plugin: reads ...").
func notRunInFolder(set *appset.ApplicationSet) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range generatorTree(set.Spec.Generators) {
		if why, ok := folderGeneratorLimit(k); ok && !seen[k] {
			seen[k] = true
			out = append(out, k+" generator: "+why)
		}
	}
	sort.Strings(out)
	return out
}

// folderSets are the ApplicationSets of the --apps folder as the portal
// runs them.
type folderSets struct {
	sets   []appset.ApplicationSet
	notRun map[string][]string // by set name: why it does not run
	runner *controller.Runner  // nil when no set runs
	mu     gosync.Mutex
	// generated are the apps the sets generated, as last served: app ->
	// set (written by serve, under mu).
	generated map[string]string
}

// newFolderSets splits sets into those that run and those that cannot.
func newFolderSets(e *gitops.Engine, sets []appset.ApplicationSet) (*folderSets, error) {
	f := &folderSets{sets: sets, notRun: map[string][]string{}, generated: map[string]string{}}
	var run []appset.ApplicationSet
	for i := range sets {
		if why := notRunInFolder(&sets[i]); len(why) > 0 {
			f.notRun[sets[i].Name] = why
			continue
		}
		run = append(run, sets[i])
	}
	if len(run) > 0 {
		r, err := controller.New(e, run, controller.DefaultOptions())
		if err != nil {
			return nil, err
		}
		f.runner = r
	}
	return f, nil
}

// run waits for the engine's run loop, runs the sets until ctx ends, and
// keeps the portal's apps in step with what they generate: each change of
// a set's Applications is served at once and pushed to the list, as a
// create or delete in the portal is. logw receives a failure to start.
func (fs *folderSets) run(ctx context.Context, s *server, e *gitops.Engine, logw func(string)) {
	if fs.runner == nil {
		return
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for !e.Apps().Running() {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
	done := make(chan error, 1)
	go func() { done <- fs.runner.Run(ctx) }()
	for {
		select {
		case err := <-done:
			if err != nil && ctx.Err() == nil {
				logw("portal: ApplicationSets of --apps: " + err.Error())
			}
			return
		case <-tick.C:
			fs.serve(s, e)
		}
	}
}

// serve adds the generated apps the portal does not serve yet, updates
// those whose spec changed and drops those no set owns any more.
func (fs *folderSets) serve(s *server, e *gitops.Engine) {
	now := map[string]string{}
	for i := range fs.sets {
		st, ok := fs.runner.Status(fs.sets[i].Namespace, fs.sets[i].Name)
		if !ok {
			continue
		}
		for _, k := range st.Applications {
			a, ok := e.Apps().ManagedApp(k)
			if !ok {
				continue
			}
			now[a.Name] = fs.sets[i].Name
			prev, served := s.app(a.Name)
			if served && fs.generated[a.Name] == "" {
				continue // the folder's own app of that name: the set's is refused (ErrAppOwned)
			}
			if served && reflect.DeepEqual(prev.Spec, a.Spec) {
				continue
			}
			s.putApp(&a)
			if !served {
				s.opts.Hooks.list.publish(listTopic, streamEvent{Name: "created", Data: a.Name})
			}
		}
	}
	for name := range fs.generated {
		if _, ok := now[name]; !ok {
			s.removeApp(name)
			s.opts.Hooks.list.publish(listTopic, streamEvent{Name: "removed", Data: name})
		}
	}
	fs.mu.Lock()
	fs.generated = now
	fs.mu.Unlock()
}

// views are the folder's sets the caller may get, as the ApplicationSets
// page shows them.
func (fs *folderSets) views(s *server, c caller) []appSetView {
	out := []appSetView{}
	fs.mu.Lock()
	generated := fs.generated
	fs.mu.Unlock()
	for i := range fs.sets {
		set := &fs.sets[i]
		if !s.opts.Authz.allow(c.identity, rbac.ResourceApplicationSets, rbac.ActionGet, appSetObject(set)) {
			continue
		}
		v := appSetView{Name: set.Name, Project: appSetProject(set), Generators: generatorKinds(set.Spec.Generators),
			Apps: []string{}, Conditions: []appSetConditionRow{}, Steps: []appSetStepRow{}, Folder: true, NotRun: fs.notRun[set.Name]}
		if st := set.Spec.Strategy; st != nil {
			v.Strategy = st.Type
		}
		var names []string
		for app, owner := range generated {
			if owner == set.Name {
				names = append(names, app)
			}
		}
		sort.Strings(names)
		for _, name := range names {
			if a, ok := s.app(name); ok && s.opts.Authz.allow(c.identity, rbac.ResourceApplications, rbac.ActionGet, appObject(a)) {
				v.Apps = append(v.Apps, name)
			}
		}
		if fs.runner != nil && len(v.NotRun) == 0 {
			if st, ok := fs.runner.Status(set.Namespace, set.Name); ok {
				switch {
				case st.Err != nil:
					v.Conditions = append(v.Conditions, appSetConditionRow{Type: "ErrorOccurred", Status: "True", Reason: "ApplicationGenerationFromParamsError", Message: st.Err.Error()})
				case st.Reconciles > 0:
					v.Conditions = append(v.Conditions, appSetConditionRow{Type: "ResourcesUpToDate", Status: "True", Reason: "ApplicationSetUpToDate", Message: "All applications have been generated successfully"})
				}
				if st.Step >= 0 {
					v.CurrentStep = st.Step + 1
				}
			}
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
