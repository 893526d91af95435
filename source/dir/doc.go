// Package dir is a source.Source over a local folder, for pipelines that
// test the manifests of their own checkout and for tests.
//
// The revision of a folder is a hash of its content: Resolve reads the
// folder and builds the same Git tree objects `git add -A && git write-tree`
// would (so TreeHash of a subtree equals the Git tree hash of the same
// content, and the render cache hits across this source and source/git),
// and names the revision "sha256:" plus a hash of the root tree. Snapshot
// re-reads the folder into memory and refuses, with
// source.ErrRevisionNotFound, a folder that changed since it was resolved:
// a snapshot never changes under a renderer.
//
// Reading is bounded (Options.MaxBytes, Options.MaxFiles), skips ".git",
// drops empty directories (Git does not track them), keeps symbolic links
// as links without following them (the snapshot then refuses any that
// leave the tree) and fails, naming the file, on unreadable files and on
// sockets, devices and pipes.
package dir
