package v1alpha1

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// crdField is one line of testdata/argocd-fields.txt.
type crdField struct {
	kind, path, typ string
}

// readCRDFields reads the fixture, with each "=ApplicationSource" place
// expanded into the fields of an ApplicationSource, and returns the
// leaves (fields without fields of their own) of Application and
// AppProject.
func readCRDFields(t *testing.T) []crdField {
	t.Helper()
	f, err := os.Open("testdata/argocd-fields.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var source, all []crdField
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		parts := strings.Fields(line)
		if len(parts) != 3 {
			t.Fatalf("bad fixture line %q", line)
		}
		fl := crdField{parts[0], parts[1], parts[2]}
		if fl.kind == "ApplicationSource" {
			source = append(source, fl)
		} else {
			all = append(all, fl)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	var expanded []crdField
	for _, fl := range all {
		if fl.typ != "=ApplicationSource" {
			expanded = append(expanded, fl)
			continue
		}
		expanded = append(expanded, crdField{fl.kind, fl.path, "object"})
		for _, s := range source {
			expanded = append(expanded, crdField{fl.kind, fl.path + "." + s.path, s.typ})
		}
	}
	// A field is a leaf when no other field is under it.
	parents := map[string]bool{}
	for _, fl := range expanded {
		p := fl.kind + " " + fl.path
		for i := len(p) - 1; i > 0; i-- {
			switch {
			case p[i] == '.':
				parents[p[:i]] = true
			case p[i] == '[' && strings.HasPrefix(p[i:], "[]"):
				parents[p[:i]] = true
			}
		}
	}
	var leaves []crdField
	for _, fl := range expanded {
		if fl.path != "apiVersion" && fl.path != "kind" && !parents[fl.kind+" "+fl.path] {
			leaves = append(leaves, fl)
		}
	}
	sort.Slice(leaves, func(i, j int) bool { return leaves[i].kind+leaves[i].path < leaves[j].kind+leaves[j].path })
	return leaves
}

// refusedFields are the Argo CD fields the engine does not implement (path
// prefixes, "[]" for any list item): loading one in spec is a *LoadError
// naming it. "absent" ones have no place in the model (in a controller's
// status they are dropped); "refused" ones are in the model, so that
// status keeps them, and validation refuses them in spec.
var refusedFields = map[string]string{
	"ApplicationSource helm.passCredentials": "refused",
}

// droppedStatusFields are fields of what a controller writes (status,
// operation) the model has no place for: read leniently and dropped.
var droppedStatusFields = map[string]string{
	"AppProject status.jwtTokensByRole": "absent",
}

// sourcePlaces are where an ApplicationSource sits in an Application.
var sourcePlaces = []string{
	"spec.source", "spec.sources[]",
	"status.sync.comparedTo.source", "status.sync.comparedTo.sources[]",
	"status.history[].source", "status.history[].sources[]",
	"status.operationState.operation.sync.source", "status.operationState.operation.sync.sources[]",
	"status.operationState.syncResult.source", "status.operationState.syncResult.sources[]",
	"operation.sync.source", "operation.sync.sources[]",
	"spec.sourceHydrator.drySource",
	"status.sourceHydrator.currentOperation.sourceHydrator.drySource",
	"status.sourceHydrator.lastSuccessfulOperation.sourceHydrator.drySource",
}

// listed reports whether kind and path fall under an entry of set (of
// any value when want is ""), directly or, for a field of an
// ApplicationSource, through its place.
func listed(set map[string]string, want, kind, path string) bool {
	for p, v := range set {
		if want != "" && v != want {
			continue
		}
		k, prefix, _ := strings.Cut(p, " ")
		if k == kind && hasPathPrefix(path, prefix) {
			return true
		}
		if k == "ApplicationSource" && kind == "Application" {
			for _, place := range sourcePlaces {
				if hasPathPrefix(path, place+"."+prefix) {
					return true
				}
			}
		}
	}
	return false
}

func hasPathPrefix(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+".") || strings.HasPrefix(path, prefix+"[]")
}

// TestArgoCDFields walks every field of Argo CD's Application and
// AppProject CRDs (testdata/argocd-fields.txt) and asserts, for each, what
// the loaders promise: a field of spec or metadata loads and is kept, or is
// refused with a *LoadError naming it (or the object holding it); a field
// of status or operation loads and is kept, or is one of the few the model
// has no place for, dropped.
func TestArgoCDFields(t *testing.T) {
	fields := readCRDFields(t)
	if len(fields) < 1000 {
		t.Fatalf("only %d fields in the fixture", len(fields))
	}
	var kept, refused, dropped int
	for _, fl := range fields {
		doc, value := fieldDoc(fl)
		raw, err := yaml.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := loadOne(fl.kind, raw)
		lenient := strings.HasPrefix(fl.path, "status") || strings.HasPrefix(fl.path, "operation")
		switch {
		case !lenient && listed(refusedFields, "", fl.kind, fl.path):
			var le *LoadError
			if !errors.As(err, &le) || !hasPathPrefix(fl.path, indexless(le.Path)) || le.Path == "" || !errors.Is(le, ErrUnsupported) {
				t.Errorf("%s %s: want a LoadError naming the field as unsupported, got %v", fl.kind, fl.path, err)
				continue
			}
			refused++
		case err != nil:
			t.Errorf("%s %s: refused: %v\n%s", fl.kind, fl.path, err, raw)
		case lenient && (listed(droppedStatusFields, "", fl.kind, fl.path) || listed(refusedFields, "absent", fl.kind, fl.path)):
			if v, ok := lookup(got, fl.path); ok {
				t.Errorf("%s %s: the model has no place for it, yet it came back as %v", fl.kind, fl.path, v)
			}
			dropped++
		default:
			path := fl.path
			if path == "metadata" {
				// The sample's labels, next to the base's name.
				path, value = "metadata.labels", value.(map[string]any)["labels"]
			}
			v, ok := lookup(got, path)
			if !ok || !reflect.DeepEqual(v, value) {
				t.Errorf("%s %s: loaded as %v (present %v), want %v: silently dropped", fl.kind, fl.path, v, ok, value)
				continue
			}
			kept++
		}
	}
	t.Logf("%d fields of Argo CD's Application and AppProject: %d kept, %d refused by name, %d status fields dropped", len(fields), kept, refused, dropped)
}

// loadOne loads one manifest and returns it as JSON-shaped maps.
func loadOne(kind string, raw []byte) (map[string]any, error) {
	var obj any
	var err error
	switch kind {
	case ApplicationKind:
		var apps []Application
		apps, err = LoadApplications(strings.NewReader(string(raw)))
		if err == nil {
			obj = &apps[0]
		}
	case AppProjectKind:
		var ps []AppProject
		ps, err = LoadProjects(strings.NewReader(string(raw)))
		if err == nil {
			obj = &ps[0]
		}
	}
	if err != nil {
		return nil, err
	}
	js, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(js, &out)
}

const sampleTime = "2026-12-01T08:00:00Z"

// fieldDoc is a valid minimal manifest of fl's kind with fl set to a
// sample value of its type, and that value as JSON decodes it.
func fieldDoc(fl crdField) (map[string]any, any) {
	doc := map[string]any{"apiVersion": APIVersion, "kind": fl.kind, "metadata": map[string]any{"name": "field-walk"}}
	switch fl.kind {
	case ApplicationKind:
		spec := map[string]any{
			"destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "apps"},
			"source":      map[string]any{"repoURL": "https://git.example.com/r.git"},
		}
		switch {
		case hasPathPrefix(fl.path, "spec.sources"):
			delete(spec, "source")
			spec["sources"] = []any{map[string]any{"repoURL": "https://git.example.com/r.git"}}
		case hasPathPrefix(fl.path, "spec.sourceHydrator"):
			delete(spec, "source")
			spec["sourceHydrator"] = map[string]any{
				"drySource":  map[string]any{"repoURL": "https://git.example.com/r.git", "targetRevision": "HEAD", "path": "dry"},
				"syncSource": map[string]any{"targetBranch": "environments/dev", "path": "hydrated"},
			}
		case fl.path == "spec.destination.name":
			delete(spec["destination"].(map[string]any), "server")
		case hasPathPrefix(fl.path, "spec.ignoreDifferences"):
			spec["ignoreDifferences"] = []any{map[string]any{"kind": "Deployment"}}
		}
		doc["spec"] = spec
	case AppProjectKind:
		spec := map[string]any{}
		switch {
		case hasPathPrefix(fl.path, "spec.syncWindows"):
			spec["syncWindows"] = []any{map[string]any{"kind": "allow", "schedule": "0 9 * * *", "duration": "1h"}}
		case hasPathPrefix(fl.path, "spec.destinations"):
			spec["destinations"] = []any{map[string]any{"server": "*"}}
		case hasPathPrefix(fl.path, "spec.roles"):
			spec["roles"] = []any{map[string]any{"name": "walker"}}
		case hasPathPrefix(fl.path, "spec.sourceIntegrity"):
			spec["sourceIntegrity"] = map[string]any{"git": map[string]any{"policies": []any{map[string]any{
				"repos": []any{map[string]any{"url": "*"}}, "gpg": map[string]any{"mode": "head", "keys": []any{}},
			}}}}
		}
		doc["spec"] = spec
	}
	value := sample(fl)
	setPath(doc, fl.path, value)
	// As JSON decodes it (numbers are float64).
	js, _ := json.Marshal(value)
	var decoded any
	_ = json.Unmarshal(js, &decoded)
	return doc, decoded
}

// sample is a valid value for the field: what its validation accepts.
func sample(fl crdField) any {
	last := fl.path[strings.LastIndexAny(fl.path, ".")+1:]
	switch {
	case fl.path == "metadata":
		return map[string]any{"labels": map[string]any{"team": "a"}}
	case strings.HasSuffix(fl.path, "syncOptions[]"):
		return "CreateNamespace=true"
	case strings.HasSuffix(fl.path, "backoff.duration"), strings.HasSuffix(fl.path, "backoff.maxDuration"):
		return "5s"
	case strings.HasSuffix(fl.path, "jsonPointers[]"):
		return "/spec/replicas"
	case strings.HasSuffix(fl.path, "helm.version"):
		return "v3"
	case fl.path == "spec.syncWindows[].kind":
		return "deny"
	case fl.path == "spec.syncWindows[].schedule":
		return "0 22 * * *"
	case fl.path == "spec.syncWindows[].duration":
		return "2h"
	case fl.path == "spec.syncWindows[].timeZone":
		return "Europe/Berlin"
	case fl.path == "spec.sourceIntegrity.git.policies[].gpg.mode":
		return "strict"
	case fl.path == "spec.sourceIntegrity.git.policies[].gpg.keys[]", fl.path == "spec.signatureKeys[].keyID":
		return "D56C4FCA57A46444"
	case strings.HasSuffix(fl.path, "].name") && strings.HasPrefix(fl.path, "spec.clusterResource"):
		return "team1-*"
	}
	switch last {
	case "lastTransitionTime", "deployedAt", "deployStartedAt", "startedAt", "finishedAt", "reconciledAt", "observedAt":
		return sampleTime
	}
	switch fl.typ {
	case "string":
		return "sample-1"
	case "integer":
		return 3
	case "boolean":
		return true
	case "int-or-string":
		return 2
	}
	return map[string]any{"k": "v"}
}

// pathTokens splits "spec.sources[].helm.parameters[].name" into its
// steps; a "[]" step is the first list item, "*" a map key.
func pathTokens(path string) []string {
	var out []string
	for _, part := range strings.Split(path, ".") {
		for strings.HasSuffix(part, "[]") {
			out = append(out, strings.TrimSuffix(part, "[]"), "[]")
			part = ""
		}
		if part != "" {
			out = append(out, part)
		}
	}
	return out
}

// mapKey is the key a "*" step uses: patch options only take Argo CD's
// two names.
func mapKey(path string) string {
	if strings.HasSuffix(path, "patches[].options.*") {
		return "allowNameChange"
	}
	return "k"
}

func setPath(doc map[string]any, path string, value any) {
	toks := pathTokens(path)
	cur := doc
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		if tok == "*" {
			tok = mapKey(path)
		}
		last := i == len(toks)-1
		switch {
		case last:
			if m, ok := value.(map[string]any); ok {
				if old, ok := cur[tok].(map[string]any); ok {
					for k, v := range m {
						old[k] = v
					}
					return
				}
			}
			cur[tok] = value
			return
		case toks[i+1] == "[]":
			if i+1 == len(toks)-1 {
				cur[tok] = []any{value}
				return
			}
			list, _ := cur[tok].([]any)
			if len(list) == 0 {
				list = []any{map[string]any{}}
				cur[tok] = list
			}
			cur = list[0].(map[string]any)
			i++ // the "[]" step
		default:
			next, ok := cur[tok].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[tok] = next
			}
			cur = next
		}
	}
}

func lookup(doc map[string]any, path string) (any, bool) {
	var cur any = doc
	for _, tok := range pathTokens(path) {
		switch c := cur.(type) {
		case map[string]any:
			if tok == "*" {
				tok = mapKey(path)
			}
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			if tok != "[]" || len(c) == 0 {
				return nil, false
			}
			cur = c[0]
		default:
			return nil, false
		}
	}
	return cur, true
}
