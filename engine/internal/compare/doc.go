// Package compare compares an application's desired state with the live
// state of its destination, and remembers enough to answer the next
// refresh cheaply when nothing it read has changed.
//
// The story of a comparison:
//
//  1. Comparer.Differ gives each app the Differ of its comparison options
//     (ignoreDifferences, compare and sync options, the destination's
//     schema and dry-runner): one compiled diff.Differ per set of options,
//     forked per app (differs.go). Each app's Differ is a MemoDiffer: an
//     object whose desired content and live version did not change is not
//     diffed again (memodiffer.go).
//  2. Comparer.Compare walks the desired objects: hooks and child
//     Applications get rows of their own; every other object has its scope
//     settled, is checked against the project and the host's policies,
//     gets the app's tracking id, is diffed with its live object and judged
//     healthy or not. Live objects the app tracks but no longer renders are
//     rows that require pruning (compare.go).
//  3. Comparer.Keep remembers the outcome under a fingerprint of the inputs
//     (Comparer.Inputs) and of the live objects the comparison read;
//     Comparer.Reuse answers the next refresh from it while neither
//     changed, with health judged again but for the verdicts that read the
//     object alone (health.DefaultChecker.Pure), kept for the object's
//     version (memo.go).
//  4. Comparer.Orphans warns of objects in the destination namespace that
//     no app tracks (orphans.go); Comparer.SharedOwners finds desired
//     objects another app manages, for FailOnSharedResource (shared.go).
//
// The package knows nothing of the engine: a Comparer is made of plain
// settings and collaborators (Config), and a destination is described by
// value (Destination).
package compare
