package strictload

import (
	"errors"
	"strings"
	"testing"
)

type thing struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Size  int      `json:"size"`
		Items []string `json:"items"`
	} `json:"spec"`
}

func TestLoadReportsEveryProblemWithItsLine(t *testing.T) {
	stream := `apiVersion: x.io/v1
kind: Thing
metadata: {name: ok}
spec: {size: 1}
---
apiVersion: x.io/v1
kind: Thing
metadata: {name: typed}
spec:
  size: big
---
apiVersion: x.io/v1
kind: Thing
metadata: {name: unknown}
spec:
  items: [a]
  colour: red
---
apiVersion: x.io/v1
kind: Other
metadata: {name: other}
---
apiVersion: x.io/v1
kind: Thing
metadata: {name: invalid}
spec:
  size: -1
`
	validate := func(v *thing) []FieldError {
		if v.Spec.Size < 0 {
			return []FieldError{{Path: "spec.size", Err: errors.New("must not be negative")}}
		}
		return nil
	}
	out, err := Load(strings.NewReader(stream), "test", "x.io/v1", "Thing", validate)
	if out != nil {
		t.Fatalf("returned %d things with errors", len(out))
	}
	want := []string{
		"document 1 line 10: spec.size: cannot be string, want int",
		"document 2 line 17: spec.colour: unknown field",
		"document 3 line 19: want one x.io/v1 Thing, got x.io/v1 Other",
		"document 4 line 27: spec.size: must not be negative",
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in\n%v", w, err)
		}
	}
	out, err = Load(strings.NewReader(strings.Split(stream, "---")[0]), "test", "x.io/v1", "Thing", validate)
	if err != nil || len(out) != 1 || out[0].Metadata.Name != "ok" {
		t.Fatalf("good document: %v %+v", err, out)
	}
}
