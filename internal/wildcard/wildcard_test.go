package wildcard

import "testing"

func TestMatch(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*", "https://a.example.com:6443/x", true},
		{"https://*.example.com", "https://prod.eu.example.com", true},
		{"https://*.example.com", "https://example.org", false},
		{"https://10.0.0.?:6443", "https://10.0.0.7:6443", true},
		{"https://10.0.0.?:6443", "https://10.0.0.17:6443", false},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXbYY", false},
		{"", "", true},
		{"", "x", false},
	}
	for _, c := range cases {
		if got := Match(c.pattern, c.s); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
	if !Any([]string{"x", "y*"}, "yes") || Any(nil, "x") {
		t.Error("Any")
	}
}
