// Command apicheck fails when the module's exported API changed
// incompatibly since the release recorded in api/RELEASE and CHANGELOG.md's
// Unreleased section does not list the change (package internal/apicheck):
// make apicheck runs it at the module's root.
package main
