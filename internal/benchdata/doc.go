// Package benchdata holds the inputs the benchmarks share: a realistic
// Deployment and a Helm chart of any size. The packages' own Go
// benchmarks and the side-by-side harness of bench/ (a separate module,
// which cannot import test files) build the same inputs from here, so
// their figures compare.
package benchdata
