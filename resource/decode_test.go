package resource

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestDecodeMultiDocumentYAML(t *testing.T) {
	in := `# leading comment
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: a
data:
  on: "yes"
  port: "80"
---

---
# only a comment
---
null
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: b, namespace: web}
spec:
  replicas: 3
--- 
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {name: c}
- apiVersion: v1
  kind: Secret
  metadata: {name: d}
`
	objs, err := Decode("app.yaml", []byte(in), DefaultDecodeOptions())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, KeyOf(o).String())
	}
	want := []string{"ConfigMap a", "apps/Deployment web/b", "Service c", "Secret d"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("got %v, want %v", got, want)
	}
	// Integers stay int64 so unstructured accessors work.
	if r, ok := objs[1].Object["spec"].(map[string]any)["replicas"].(int64); !ok || r != 3 {
		t.Fatalf("replicas = %#v, want int64 3", objs[1].Object["spec"].(map[string]any)["replicas"])
	}
}

// Unquoted YAML 1.1 scalars read as kubectl reads them.
func TestDecodeScalarsLikeKubectl(t *testing.T) {
	in := "apiVersion: v1\nkind: X\nmetadata: {name: a}\nspec: {a: yes, b: off, c: 0x10, d: 1.5, e: \"007\"}\n"
	objs, err := Decode("x.yaml", []byte(in), DefaultDecodeOptions())
	if err != nil {
		t.Fatal(err)
	}
	spec := objs[0].Object["spec"].(map[string]any)
	want := map[string]any{"a": true, "b": false, "c": int64(16), "d": 1.5, "e": "007"}
	for k, v := range want {
		if spec[k] != v {
			t.Errorf("spec.%s = %#v (%T), want %#v", k, spec[k], spec[k], v)
		}
	}
}

func TestDecodeJSONStream(t *testing.T) {
	in := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}
{"apiVersion":"v1","kind":"ConfigMapList","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"}}]}`
	objs, err := Decode("a.json", []byte(in), DefaultDecodeOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[1].GetName() != "b" {
		t.Fatalf("got %d objects", len(objs))
	}
}

func TestDecodeErrorsNameFileAndDocument(t *testing.T) {
	cases := []struct {
		name, in  string
		doc, line int
		want      error
	}{
		{"syntax", "apiVersion: v1\nkind: A\nmetadata: {name: a}\n---\nkey: [unclosed\n", 1, 5, ErrSyntax},
		{"scalar", "apiVersion: v1\nkind: A\nmetadata: {name: a}\n---\njust a string\n", 1, 5, ErrNotObject},
		{"sequence", "- a\n- b\n", 0, 1, ErrNotObject},
		{"no kind", "apiVersion: v1\nmetadata: {name: a}\n", 0, 1, ErrMissingKind},
		{"list item", "apiVersion: v1\nkind: List\nitems: [3]\n", 0, 1, ErrNotObject},
		{"json syntax", `{"apiVersion": "v1", "kind": }`, 0, 0, ErrSyntax},
		{"self alias", "a: &x [*x]\n", 0, 1, ErrAliasExpansion},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs, err := Decode("dir/file.yaml", []byte(c.in), DefaultDecodeOptions())
			if objs != nil {
				t.Fatalf("partial result returned with error")
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %v is not a *DecodeError", err)
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v does not wrap %v", err, c.want)
			}
			if de.File != "dir/file.yaml" || de.Document != c.doc {
				t.Fatalf("error names %s document %d, want document %d", de.File, de.Document, c.doc)
			}
			if c.line != 0 && de.Line != c.line {
				t.Fatalf("line = %d, want %d", de.Line, c.line)
			}
			if !strings.Contains(err.Error(), "dir/file.yaml") {
				t.Fatalf("message %q does not name the file", err)
			}
		})
	}
}

func TestDecodeErrorsDoNotQuoteContent(t *testing.T) {
	in := "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {password: hunter2-plaintext\n"
	_, err := Decode("secret.yaml", []byte(in), DefaultDecodeOptions())
	if err == nil {
		t.Fatal("malformed Secret accepted")
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error quotes the Secret: %v", err)
	}
}

func TestDecodeLimits(t *testing.T) {
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
	t.Run("stream bytes", func(t *testing.T) {
		_, err := Decode("f", []byte(doc), DecodeOptions{MaxStreamBytes: 10})
		if !errors.Is(err, ErrTooLarge) || err.(*DecodeError).Document != -1 {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("stream bytes from reader", func(t *testing.T) {
		_, err := DecodeReader("f", strings.NewReader(strings.Repeat(doc+"---\n", 100)), DecodeOptions{MaxStreamBytes: 1000})
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("document bytes", func(t *testing.T) {
		_, err := Decode("f", []byte(doc+"---\n"+doc+"data: {x: "+strings.Repeat("y", 200)+"}\n"), DecodeOptions{MaxDocumentBytes: 100})
		if !errors.Is(err, ErrTooLarge) || err.(*DecodeError).Document != 1 {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("documents", func(t *testing.T) {
		_, err := Decode("f", []byte(strings.Repeat(doc+"---\n", 6)), DecodeOptions{MaxDocuments: 5})
		if !errors.Is(err, ErrTooManyDocuments) || err.(*DecodeError).Document != 5 {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("list items count", func(t *testing.T) {
		items := strings.Repeat("- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n", 6)
		_, err := Decode("f", []byte("apiVersion: v1\nkind: List\nitems:\n"+items), DecodeOptions{MaxDocuments: 5})
		if !errors.Is(err, ErrTooManyDocuments) {
			t.Fatalf("got %v", err)
		}
	})
}

// billionLaughs builds the classic alias bomb: levels of nine references each.
func billionLaughs(levels int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\nx:\n  a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for i := 1; i < levels; i++ {
		fmt.Fprintf(&b, "  a%d: &a%d [", i, i)
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func TestDecodeRefusesAliasBombQuicklyWithBoundedMemory(t *testing.T) {
	bomb := billionLaughs(9)
	if len(bomb) > 1000 {
		t.Fatalf("bomb is %d bytes; the point is a small input", len(bomb))
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := Decode("bomb.yaml", []byte(bomb), DefaultDecodeOptions())
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrAliasExpansion) {
		t.Fatalf("alias bomb: got %v, want ErrAliasExpansion", err)
	}
	if elapsed > 2*time.Second {
		t.Fatalf("refusing the bomb took %v", elapsed)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("refusing the bomb allocated %d bytes", alloc)
	}
}

func TestDecodeAcceptsOrdinaryAnchors(t *testing.T) {
	in := `apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  labels: &labels {app: web, tier: front}
  annotations: *labels
data: {k: "a*b&c"}
`
	objs, err := Decode("f", []byte(in), DefaultDecodeOptions())
	if err != nil {
		t.Fatal(err)
	}
	if objs[0].GetAnnotations()["tier"] != "front" {
		t.Fatalf("alias not expanded: %v", objs[0].GetAnnotations())
	}
}

func TestSplitYAMLFollowsKubectlSeparatorRule(t *testing.T) {
	docs := splitYAML([]byte("a: 1\n---\nb: 2\n--- \t\nc: |\n  ---x\n---# not a separator\nd: 4"))
	if len(docs) != 3 {
		t.Fatalf("got %d documents, want 3", len(docs))
	}
	if docs[1].Line != 3 || docs[2].Line != 5 {
		t.Fatalf("lines = %d, %d", docs[1].Line, docs[2].Line)
	}
}

func BenchmarkDecodeDeployments(b *testing.B) {
	doc := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels: {app: web}
  annotations: {argocd.argoproj.io/sync-wave: "1"}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{containerPort: 80}]
        resources: {limits: {cpu: 500m, memory: 128Mi}}
---
`
	data := []byte(strings.Repeat(doc, 100))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode("f", data, DefaultDecodeOptions()); err != nil {
			b.Fatal(err)
		}
	}
}
