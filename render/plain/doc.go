// Package plain renders a directory of plain Kubernetes manifests: YAML
// (one or many documents per file) and JSON files, optionally recursively,
// filtered by include and exclude globs.
//
// Rules:
//   - files ending in .yaml, .yml or .json are manifests; every other file
//     (README.md, scripts, .jsonnet) is ignored, and so is every file or
//     directory whose name starts with a dot (.git, .github, .helmignore);
//     with DirectorySource.DisableExtensionFilter every file but .jsonnet
//     ones is a manifest, Include and Exclude the only filters (Argo CD's
//     directory.disableExtensionFilter: "*.yaml.sealed");
//   - without DirectorySource.Recurse only the application directory itself
//     is read; with it, sub-directories are walked in lexical order, and a
//     directory reached again through a symbolic link is walked once;
//   - DirectorySource.Include and Exclude are render.MatchGlob patterns over
//     the path relative to the application directory;
//   - documents are decoded by resource.Decode under the renderer's limits:
//     List kinds are flattened, empty documents skipped, and a file that does
//     not hold Kubernetes objects fails the render with an error that names
//     it (a manifest is never dropped silently);
//   - objects come out in lexical file order, then document order.
package plain
