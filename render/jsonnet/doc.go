// Package jsonnet renders Jsonnet applications with
// github.com/google/go-jsonnet, reading every file through a render.Root.
//
// Rules:
//   - every *.jsonnet file of the application directory (and of its
//     sub-directories with DirectorySource.Recurse) is evaluated, in
//     lexical order; *.libsonnet files are only imported; names starting
//     with a dot are skipped;
//   - ext vars and top-level arguments come from JsonnetSource, as strings
//     or (with Code) as Jsonnet code;
//   - import and importstr resolve relative to the importing file, then in
//     each JsonnetSource.Libs directory (relative to the root of the tree,
//     as Argo CD's libs); absolute paths, URLs, ".." past the root and
//     symbolic links that leave the tree fail with the render package's
//     typed errors;
//   - a file's output may be an object, an array of objects (nested arrays
//     are flattened) or a List; objects are checked by resource.Decode
//     under the renderer's limits;
//   - the evaluation stops at Options.MaxStackDepth; it cannot be
//     interrupted half way (go-jsonnet has no cancellation), so on context
//     cancellation the render returns at once and the evaluation finishes
//     in the background.
package jsonnet
