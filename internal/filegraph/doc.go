// Package filegraph measures how the files of one Go package refer to
// each other: file A refers to file B when A uses a package-level name,
// a method or a struct field that B declares. Its strongly connected
// components are the package's reference cycles; the largest one is what
// a reader must hold in mind at once to change any file in it, and the
// figure issue 44 sets a budget for (engine: at most 8 files).
//
// The package is type-checked with go/types against the export data the
// go command writes (go list -export), so method and field uses resolve
// exactly, as the compiler resolves them. Test files are left out.
package filegraph
