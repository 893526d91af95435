// Command testtools builds every program the tests run (package
// internal/testtools): make tools runs it before the tests.
package main
