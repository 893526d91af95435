package git

import (
	"errors"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/source"
)

// TestRelativeFolderIsNamedNotCalledAScheme: a relative folder given as a
// repoURL (which go-git reads as a file URL) is refused naming what the
// user wrote and how a folder is read (an absolute path or file://), never
// with a "scheme file" the user did not write.
func TestRelativeFolderIsNamedNotCalledAScheme(t *testing.T) {
	for _, raw := range []string{"testdata/repo", "./apps", "../repo"} {
		_, err := parseEndpoint(source.Repository{URL: raw}, nil)
		if !errors.Is(err, source.ErrInvalidRepository) {
			t.Fatalf("%s: %v, want ErrInvalidRepository", raw, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, `"`+raw+`"`) || !strings.Contains(msg, "absolute path or a file:// URL") || strings.Contains(msg, `scheme "file"`) {
			t.Errorf("%s: %v", raw, err)
		}
	}
}
