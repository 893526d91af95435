package preview

import "github.com/kubegitops/gitops/source/git"

// LocalGit is a Source over a Git repository on disk, for previews in a CI
// job that has checked the repository out: source/git's Local.
//
// Deprecated: use git.Local (package source/git).
type LocalGit = git.Local

// OpenLocalGit opens the repository at dir (or a parent of it).
//
// Deprecated: use git.OpenLocal (package source/git).
func OpenLocalGit(dir string) (*LocalGit, error) { return git.OpenLocal(dir) }
