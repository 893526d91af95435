package diff

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/resource"
)

// materialize builds the value of node i as encoding/json decodes it.
func (v *lastView) materialize(i int32) any {
	n := &v.nodes[i]
	switch n.kind {
	case jObject:
		m := map[string]any{}
		for c := n.first; c >= 0; c = v.nodes[c].next {
			m[v.nodes[c].key] = v.materialize(c)
		}
		return m
	case jArray:
		l := []any{}
		for c := n.first; c >= 0; c = v.nodes[c].next {
			l = append(l, v.materialize(c))
		}
		return l
	}
	return v.value(i)
}

// checkJSONNodes checks that parseJSONNodes accepts s only when
// encoding/json does, and then reads the same object.
func checkJSONNodes(t *testing.T, s string) bool {
	t.Helper()
	nodes, ok := parseJSONNodes(s)
	if !ok {
		return false
	}
	var want map[string]any
	if err := json.Unmarshal([]byte(s), &want); err != nil || want == nil {
		t.Fatalf("parseJSONNodes accepted %q, which encoding/json refuses: %v", s, err)
	}
	if got := (&lastView{nodes: nodes}).materialize(0); !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %#v\nwant %#v", s, got, want)
	}
	return true
}

// TestParseJSONNodes checks the in-place reader against encoding/json on
// texts it takes and texts it must leave to the decoder.
func TestParseJSONNodes(t *testing.T) {
	for _, s := range []string{
		`{}`, ` {"a":1} `, `{"a":[]}`, `{"a":{}}`, `{"a":[1,"x",true,false,null,{"b":[[]]}]}`,
		`{"n":-0,"f":1.5e3,"e":2E-2,"z":0.25,"big":123456789012345678901234567890}`,
		"{\"a\"\t:\n\"b\"\r}", `{"s":"caf\u00e9 \"q\" \\ \/ \b\f\n\r\t <&>"}`, `{"s":"café"}`,
		`{"u":"\ud83d\ude00 \ud800"}`,
	} {
		if !checkJSONNodes(t, s) {
			t.Errorf("%q: refused", s)
		}
	}
	for _, s := range []string{
		``, `null`, `[]`, `"s"`, `1`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `{"a":[1,]}`,
		`{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":-}`, `{"a":1e}`, `{"a":+1}`, `{"a":1e400}`, `{"a":NaN}`,
		`{"a":tru}`, `{"a":nul}`, `{"a":"x` + "\n" + `"}`, `{"a":"\x"}`, `{"a":"\u12"}`, `{"a":1}x`, `{"a":1}{}`,
		`{"a":1,"a":2}`, `{"\u0061":1}`, "{\"a\xff\":1}", "\ufeff{}", `{'a':1}`,
		strings.Repeat(`{"a":`, lastMaxDepth+2) + `1` + strings.Repeat(`}`, lastMaxDepth+2),
		`{` + strings.TrimSuffix(strings.Repeat(`"k":1,`, 1), ",") + `,` + manyMembers(lastMaxMembers+1) + `}`,
	} {
		if checkJSONNodes(t, s) {
			t.Errorf("%q: taken, want it left to encoding/json", s)
		}
	}
	if !checkJSONNodes(t, `{`+manyMembers(lastMaxMembers)+`}`) {
		t.Errorf("%d members: refused", lastMaxMembers)
	}
	// A string with invalid UTF-8 is taken; its value is encoding/json's.
	if !checkJSONNodes(t, "{\"a\":\"x\xffy\"}") {
		t.Error("invalid UTF-8 in a value: refused")
	}
}

func manyMembers(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"m%d":%d`, i, i)
	}
	return b.String()
}

// FuzzParseJSONNodes: whatever the text, the in-place reader either leaves
// it to encoding/json or reads exactly what encoding/json decodes.
func FuzzParseJSONNodes(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,"x",true,null,{"b":{}}]}`, `{"s":"\u003c\ud800"}`, `{"a":1e400}`, `{"a":1,"a":2}`} {
		f.Add(s)
	}
	files, _ := filepath.Glob("testdata/corpus/*.yaml")
	for _, file := range files {
		c := loadCorpusCase(f, file)
		f.Add(annotation(c.LiveCSA, resource.AnnotationLastApplied))
	}
	f.Fuzz(func(t *testing.T, s string) { checkJSONNodes(t, s) })
}
