// Package treefs is a read-only fs.FS over a Git tree held in any go-git
// object store: the shared reading code of source/git (objects on disk)
// and source/dir (objects built in memory from a folder).
//
// Symbolic links are followed by Open, Stat, ReadFile and ReadDir when
// their target stays inside the tree; ReadLink and Lstat expose them as
// links. A link with an absolute target, or whose target climbs above the
// root at any step (even if it would come back in), fails with an
// *fs.PathError wrapping source.ErrOutsideRepository. Submodules appear as
// empty directories.
package treefs
