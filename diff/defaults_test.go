package diff

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubegitops/gitops/resource"
)

// defaultsCase is a history of one object: applied (what Git held before,
// applied by us), other (what another manager wrote afterwards, nil for
// nobody) and desired (what Git holds now). The live object is applied as
// the server stores it (defaults filled), with other merged in.
type defaultsCase struct {
	name             string
	applied, desired string
	other            string
	// changes: the expected Result.Changes paths (nil: in sync).
	changes []string
	// want: values of PredictedLive by JSON pointer.
	want map[string]any
	// needsHistory: the case is about a field we set and removed, which
	// a comparison without last-applied or managedFields cannot know.
	needsHistory bool
}

const deployHead = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ns}
spec:
  selector: {matchLabels: {app: web}}
`

func deployWith(spec, container string) string {
	return deployHead + spec + "  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: app, " + container + "}]}\n"
}

const stsHead = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: ns}
spec:
  serviceName: db
  replicas: 0
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: "postgres:17"}]}
`

const cronHead = `apiVersion: batch/v1
kind: CronJob
metadata: {name: job, namespace: ns}
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        spec: {restartPolicy: Never, containers: [{name: job, image: "busybox:1.37"}]}
`

const svcHead = `apiVersion: v1
kind: Service
metadata: {name: svc, namespace: ns}
spec:
  selector: {app: web}
`

const pvcHead = `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: ns}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`

// TestDefaultsFillTheMergedObject: the server's defaults are filled into
// what a merge of desired into live leaves absent, from the merged
// object's own values, and never overwrite a live value desired does not
// set. Each case runs in the client-side (three-way) and structured-merge
// modes, against a live object with the history of a client-side apply,
// of a server-side apply, and without history.
func TestDefaultsFillTheMergedObject(t *testing.T) {
	for _, c := range defaultsCases() {
		t.Run(c.name, func(t *testing.T) {
			desired := mustObject(t, c.desired)
			for vname, live := range defaultsHistories(t, c) {
				for _, mode := range []Mode{ModeThreeWay, ModeStructuredMerge} {
					opts := DefaultOptions()
					opts.Mode = mode
					res, err := mustDiffer(t, opts).Diff(context.Background(), desired, live)
					if err != nil {
						t.Fatalf("%s/%s: %v", mode, vname, err)
					}
					if c.needsHistory && res.TwoWay {
						continue
					}
					var paths []string
					for _, ch := range res.Changes {
						paths = append(paths, ch.Path)
					}
					if !slices.Equal(paths, c.changes) {
						t.Errorf("%s/%s: changes %v, want %v\n%s", mode, vname, paths, c.changes, res.Text)
					}
					for ptr, want := range c.want {
						if got := valueAt(res.PredictedLive.Object, ptr); !reflect.DeepEqual(got, want) {
							t.Errorf("%s/%s: predicted %s = %#v, want %#v", mode, vname, ptr, got, want)
						}
					}
				}
			}
		})
	}
}

// defaultsCases are histories where a default meets a merge (see
// TestDefaultsFillTheMergedObject, TestStructuredMergePredictsTheServer).
func defaultsCases() []defaultsCase {
	return []defaultsCase{{
		name:    "pull policy stays Always when an untagged image gets a tag",
		applied: deployWith("", "image: nginx"),
		desired: deployWith("", `image: "nginx:1.27"`),
		changes: []string{"/spec/template/spec/containers/0/image"},
		want: map[string]any{
			"/spec/template/spec/containers/0/image":           "nginx:1.27",
			"/spec/template/spec/containers/0/imagePullPolicy": "Always",
		},
	}, {
		name:    "pull policy stays IfNotPresent when a tagged image loses its tag",
		applied: deployWith("", `image: "nginx:1.27"`),
		desired: deployWith("", "image: nginx"),
		changes: []string{"/spec/template/spec/containers/0/image"},
		want:    map[string]any{"/spec/template/spec/containers/0/imagePullPolicy": "IfNotPresent"},
	}, {
		name:         "a pull policy we no longer set is defaulted from the new image",
		applied:      deployWith("", "image: nginx, imagePullPolicy: Never"),
		desired:      deployWith("", `image: "nginx:1.27"`),
		changes:      []string{"/spec/template/spec/containers/0/image", "/spec/template/spec/containers/0/imagePullPolicy"},
		want:         map[string]any{"/spec/template/spec/containers/0/imagePullPolicy": "IfNotPresent"},
		needsHistory: true,
	}, {
		name:    "a new container is defaulted",
		applied: deployWith("", "image: nginx"),
		desired: strings.Replace(deployWith("", "image: nginx"), "}]}", "}, {name: side, image: \"envoy:1.33\"}]}", 1),
		changes: []string{"/spec/template/spec/containers/1"},
		want: map[string]any{
			"/spec/template/spec/containers/1/imagePullPolicy":        "IfNotPresent",
			"/spec/template/spec/containers/1/terminationMessagePath": "/dev/termination-log",
		},
	}, {
		name:    "a termination message policy a webhook set",
		applied: deployWith("", "image: nginx"),
		other:   deployHead + "  template: {spec: {containers: [{name: app, terminationMessagePolicy: FallbackToLogsOnError}]}}\n",
		desired: deployWith("", `image: "nginx:1.27"`),
		changes: []string{"/spec/template/spec/containers/0/image"},
		want:    map[string]any{"/spec/template/spec/containers/0/terminationMessagePolicy": "FallbackToLogsOnError"},
	}, {
		name:    "replicas an autoscaler set, not in Git",
		applied: deployWith("", "image: nginx"),
		other:   deployHead + "  replicas: 4\n",
		desired: deployWith("", "image: nginx"),
		want:    map[string]any{"/spec/replicas": int64(4)},
	}, {
		name:    "a Deployment's rolling update another manager tuned",
		applied: deployWith("", "image: nginx"),
		other:   deployHead + "  strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}\n",
		desired: deployWith("", `image: "nginx:1.27"`),
		changes: []string{"/spec/template/spec/containers/0/image"},
		want: map[string]any{
			"/spec/strategy/type":                         "RollingUpdate",
			"/spec/strategy/rollingUpdate/maxSurge":       int64(0),
			"/spec/strategy/rollingUpdate/maxUnavailable": int64(1),
		},
	}, {
		name:         "a Deployment strategy we no longer set is defaulted",
		applied:      deployWith("  strategy: {type: Recreate}\n", "image: nginx"),
		desired:      deployWith("", "image: nginx"),
		changes:      []string{"/spec/strategy/rollingUpdate", "/spec/strategy/type"},
		want:         map[string]any{"/spec/strategy/rollingUpdate/maxSurge": "25%"},
		needsHistory: true,
	}, {
		name:    "a StatefulSet partition another manager set",
		applied: stsHead,
		other:   strings.SplitAfter(stsHead, "spec:\n")[0] + "  updateStrategy: {rollingUpdate: {partition: 2}}\n",
		desired: stsHead,
		want:    map[string]any{"/spec/updateStrategy/rollingUpdate/partition": int64(2)},
	}, {
		name:    "a StatefulSet update strategy another manager set",
		applied: stsHead,
		other:   strings.SplitAfter(stsHead, "spec:\n")[0] + "  updateStrategy: {type: OnDelete, rollingUpdate: null}\n",
		desired: strings.Replace(stsHead, "replicas: 0", "replicas: 1", 1),
		changes: []string{"/spec/replicas"},
		want:    map[string]any{"/spec/updateStrategy/type": "OnDelete"},
	}, {
		name:    "a CronJob another manager suspended",
		applied: cronHead,
		other:   strings.SplitAfter(cronHead, "spec:\n")[0] + "  suspend: true\n",
		desired: cronHead,
		want:    map[string]any{"/spec/suspend": true},
	}, {
		name:    "a Service target port another manager set",
		applied: svcHead + "  ports: [{name: http, port: 80}]\n",
		other:   svcHead + "  ports: [{port: 80, protocol: TCP, targetPort: 8080}]\n",
		desired: svcHead + "  ports: [{name: http, port: 80}]\n",
		want:    map[string]any{"/spec/ports/0/targetPort": int64(8080)},
	}, {
		name:    "a new Service port's target port is its own port",
		applied: svcHead + "  ports: [{name: http, port: 80}]\n",
		desired: svcHead + "  ports: [{name: http, port: 80}, {name: alt, port: 8080}]\n",
		changes: []string{"/spec/ports/1"},
		want:    map[string]any{"/spec/ports/0/targetPort": int64(80), "/spec/ports/1/targetPort": int64(8080)},
	}, {
		name:    "a claim's volume mode a webhook chose",
		applied: pvcHead,
		other:   pvcHead + "  volumeMode: Block\n",
		desired: strings.Replace(pvcHead, "name: data,", "name: data, labels: {tier: db},", 1),
		changes: []string{"/metadata/labels"},
		want:    map[string]any{"/spec/volumeMode": "Block"},
	}}
}

// TestDesiredIsComparedAsDeclared: Result.Desired holds what Git declares,
// without server defaults; PredictedLive of a missing object is what the
// server creates, with them.
func TestDesiredIsComparedAsDeclared(t *testing.T) {
	desired := mustObject(t, deployWith("", "image: nginx"))
	res, err := mustDiffer(t, DefaultOptions()).Diff(context.Background(), desired, nil)
	if err != nil {
		t.Fatal(err)
	}
	const ptr = "/spec/template/spec/containers/0/imagePullPolicy"
	if got := valueAt(res.Desired.Object, ptr); got != nil {
		t.Errorf("desired has the default %s = %v", ptr, got)
	}
	if got := valueAt(res.PredictedLive.Object, ptr); got != "Always" {
		t.Errorf("predicted %s = %v, want the server's default Always", ptr, got)
	}
	if !strings.Contains(res.Text, "imagePullPolicy: Always") {
		t.Errorf("the text of a missing object does not show what the server creates:\n%s", res.Text)
	}

	// An ignored field stays out of the prediction, defaulted or not.
	opts := DefaultOptions()
	opts.IgnoreRules = []IgnoreRule{{Group: "apps", Kind: "Deployment", JSONPointers: []string{ptr}}}
	res, err = mustDiffer(t, opts).Diff(context.Background(), desired, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := valueAt(res.PredictedLive.Object, ptr); got != nil || strings.Contains(res.Text, "imagePullPolicy") {
		t.Errorf("ignored %s predicted %v:\n%s", ptr, got, res.Text)
	}
}

// defaultsHistories returns the live object of c as each history leaves
// it: "csa" (kubectl apply: last-applied, the client-side manager owning
// everything it created), "ssa" (our server-side apply owning what it
// sent) and "stripped" (no history, as the cluster cache keeps it). The
// other manager's fields are its own, by a plain update.
func defaultsHistories(t *testing.T, c defaultsCase) map[string]*unstructured.Unstructured {
	t.Helper()
	ctx := context.Background()
	d := mustDiffer(t, DefaultOptions())
	applied := mustObject(t, c.applied)
	gvk := applied.GroupVersionKind()
	tc, err := BuiltinSchema().TypeConverter(ctx, gvk)
	if err != nil {
		t.Fatal(err)
	}
	fields := func(obj map[string]any) *fieldpath.Set {
		tv, err := toTyped(tc, obj)
		if err != nil {
			t.Fatal(err)
		}
		set, err := tv.ToFieldSet()
		if err != nil {
			t.Fatal(err)
		}
		return set
	}
	stored := d.Normalize(applied).Object
	otherSet := &fieldpath.Set{}
	if c.other != "" {
		other := mustObject(t, c.other).Object
		otherSet = fields(other)
		tvStored, err := toTyped(tc, stored)
		if err != nil {
			t.Fatal(err)
		}
		tvOther, err := toTyped(tc, other)
		if err != nil {
			t.Fatal(err)
		}
		merged, err := tvStored.Merge(tvOther)
		if err != nil {
			t.Fatal(err)
		}
		stored = deepCopyMap(merged.AsValue().Unstructured().(map[string]any))
		d.norm.normalize(stored)
	}
	entry := func(manager string, op metav1.ManagedFieldsOperationType, set *fieldpath.Set) metav1.ManagedFieldsEntry {
		raw, err := set.ToJSON()
		if err != nil {
			t.Fatal(err)
		}
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: applied.GetAPIVersion(), FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw}}
	}
	withOther := func(entries ...metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
		if !otherSet.Empty() {
			entries = append(entries, entry("someone", metav1.ManagedFieldsOperationUpdate, otherSet))
		}
		return entries
	}

	csa := &unstructured.Unstructured{Object: deepCopyMap(stored)}
	lastApplied, err := json.Marshal(applied.Object)
	if err != nil {
		t.Fatal(err)
	}
	csa.SetAnnotations(map[string]string{resource.AnnotationLastApplied: string(lastApplied)})
	created := fields(d.Normalize(applied).Object).Difference(otherSet.Leaves())
	csa.SetManagedFields(withOther(entry("kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate, created)))

	ssa := &unstructured.Unstructured{Object: deepCopyMap(stored)}
	ssa.SetManagedFields(withOther(entry(DefaultFieldManager, metav1.ManagedFieldsOperationApply, fields(applied.Object))))

	return map[string]*unstructured.Unstructured{
		"csa":      csa,
		"ssa":      ssa,
		"stripped": {Object: deepCopyMap(stored)},
	}
}

// valueAt returns the value at a JSON pointer of obj, nil when absent.
func valueAt(obj map[string]any, ptr string) any {
	var cur any = obj
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		switch x := cur.(type) {
		case map[string]any:
			cur = x[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			cur = x[i]
		default:
			return nil
		}
	}
	return cur
}
