// Package render turns the files of one application into Kubernetes
// objects, safely and only once per distinct set of inputs.
//
// A Renderer takes an Input: a read-only tree (an fs.FS, usually a
// source.Snapshot), the application's path in it, the per-application tool
// options (DirectorySource, HelmSource, KustomizeSource, JsonnetSource,
// PluginSource, shaped like Argo CD's spec.source), and what the target
// cluster is (namespace, kube version, API versions). Detect picks the tool
// the way Argo CD does; Tools dispatches to the renderers of the
// sub-packages: render/plain, render/kustomize, render/helm,
// render/jsonnet and render/plugin. No renderer shells out to helm or
// kustomize, and none touches the network unless its options allow it.
//
// Every renderer reads through a Root, which is where untrusted
// repositories are contained: names may not be absolute or climb out of
// the tree, symbolic links are resolved one element at a time and refused
// the moment they leave (so a chain that leaves and comes back is refused
// too), and each render has byte and file budgets. Refusals are
// *PathError values wrapping ErrOutsideRoot, ErrAbsolutePath,
// ErrSymlinkLoop, ErrTooLarge, ErrTooManyFiles or ErrSchemeNotAllowed; they
// name the path asked for and never quote file contents. Renderers wrap
// their failures in *Error, which names the tool and the application.
// Root.Walk is the one tree walk of every renderer (and of kustomize's file
// system): links are followed inside the root, and a link cycle ends.
//
// Cached puts a content-addressed cache (a cache/store.Store: memory,
// Redis, or both) in front of any renderer that reports its Identity. The
// key covers the tree hash of the application path and a digest of every
// other path the render actually read (recorded through the FS during the
// render), the renderer's options, the Input and the tool's library
// version, so a monorepo commit re-renders only the applications whose
// inputs it touched, and tightening any option is a miss (argo-cd#29766).
// Identical concurrent renders run once, failures are cached with
// exponential backoff (Refresh bypasses), and parallelism is bounded.
//
// Decrypting puts a Decryptor (the SOPS one lives in the sops/ module)
// under any renderer: every file a tool reads that the decryptor
// recognises reads as its plaintext, and a file that fails to decrypt
// fails the render with a *DecryptError naming it. The decryptor's ID
// enters the cache key; the output of a render that decrypted anything is
// cached in process memory only (CacheOptions.Private), never in the
// shared store, so Redis never holds plaintext. A SOPS document that
// reaches the plain, Kustomize or Helm (value file, file parameter)
// renderer undecrypted, with no decryptor or one that did not recognise
// it, fails the render with an *EncryptedError naming the file
// (RefuseEncrypted): ciphertext and the sops: metadata are never rendered
// as manifests or values. Plugins may decrypt on their own and are not
// checked.
package render
