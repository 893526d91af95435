package health

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type constChecker struct{}

func (constChecker) Check(*unstructured.Unstructured) (*Status, error) {
	return &Status{Code: Healthy}, nil
}

func TestWithOverrides_MergesByKindAndRefusesOtherCheckers(t *testing.T) {
	base := DefaultOptions()
	base.Overrides = map[string]string{"apps_Deployment": returns("Suspended"), "example.com/Widget": returns("Degraded")}
	c := mustChecker(t, base)
	merged, err := WithOverrides(c, map[string]string{"apps/Deployment": returns("Missing")})
	if err != nil {
		t.Fatal(err)
	}
	for kind, want := range map[string]Code{"Deployment": Missing, "Widget": Degraded} {
		api := "apps/v1"
		if kind == "Widget" {
			api = "example.com/v1"
		}
		if st, err := merged.Check(object(api, kind, nil)); err != nil || st.Code != want {
			t.Errorf("%s: %+v, %v; want %s", kind, st, err, want)
		}
	}
	if st, _ := c.Check(object("apps/v1", "Deployment", nil)); st.Code != Suspended {
		t.Errorf("the original checker changed: %+v", st)
	}
	if got := MergeOverrides(map[string]string{"a.b_K": "1"}, map[string]string{"a.b/K": "2"}); len(got) != 1 || got["a.b/K"] != "2" {
		t.Errorf("MergeOverrides = %v", got)
	}
	if _, err := WithOverrides(constChecker{}, map[string]string{"K": returns("Healthy")}); !errors.Is(err, ErrNotDefaultChecker) {
		t.Errorf("a custom checker: %v, want ErrNotDefaultChecker", err)
	}
	fresh, err := WithOverrides(nil, map[string]string{"example.com_Widget": returns("Progressing")})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := fresh.Check(object("example.com/v1", "Widget", nil)); st.Code != Progressing {
		t.Errorf("nil checker with overrides: %+v", st)
	}
}
