package helmrepo

import (
	"github.com/kubegitops/gitops/source"
	"github.com/kubegitops/gitops/source/internal/treefs"
)

// Snapshot is one chart version's files, in memory, the chart's directory
// at the root. It implements source.Snapshot, fs.ReadDirFS, fs.ReadFileFS,
// fs.StatFS and fs.ReadLinkFS; TreeHash returns Git object ids of the
// files as if the chart were committed to Git.
type Snapshot struct {
	*treefs.FS
	rev  source.Revision
	size int64 // bytes of the files, for the memory bound
}

// Revision implements source.Snapshot.
func (s *Snapshot) Revision() source.Revision { return s.rev }
