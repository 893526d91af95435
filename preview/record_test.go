package preview

import "testing"

// A folder on disk is one repository whether an Application names it by
// its path or by a file:// URL; other URLs stay apart.
func TestSameRepoFolder(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"/work/shop", "file:///work/shop", true},
		{"/work/shop/", "file:///work/shop/.git", true},
		{"/work/shop", "/work/./shop", true},
		{"https://Git.example.com/shop.git", "https://git.example.com/shop", true},
		{"/work/shop", "file:///work/other", false},
		{"/work/shop", "https://git.example.com/work/shop", false},
	} {
		if got := sameRepo(c.a, c.b); got != c.same {
			t.Errorf("sameRepo(%q, %q) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}
