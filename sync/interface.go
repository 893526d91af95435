package sync

import "context"

// Interface runs sync operations against one cluster; *Syncer implements
// it, and a host may put its own behind the engine's Options.NewSyncer.
type Interface interface {
	// Sync runs one sync operation.
	Sync(ctx context.Context, req Request) (Result, error)
	// Delete deletes the objects an application manages (cascading
	// deletion of the application).
	Delete(ctx context.Context, req DeleteRequest) (DeleteResult, error)
}

var _ Interface = (*Syncer)(nil)
