//go:build !unix

package toolbuild

import "context"

// lockFile does not lock on systems without flock; parallel first builds may
// then race, and the last rename wins.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	return func() {}, nil
}
