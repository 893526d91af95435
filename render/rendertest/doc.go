// Package rendertest holds what the tests of the renderers share: an
// in-memory tree that answers TreeHash as a Git snapshot does, a loader of
// testdata folders into such a tree, SOPS-encrypted fixtures, and a walker that lists one change per
// field of an options struct, for the property test of the cache key.
package rendertest
