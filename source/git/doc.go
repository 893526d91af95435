// Package git is the Git implementation of source.Source, on go-git, built
// to be a well-behaved client of Git hosts and a safe neighbour to the
// renderers that read from it.
//
// Resolve asks the server for its refs (one ls-remote, no clone) and picks
// the commit: HEAD, a branch, a tag (annotated tags peeled), any refs/...
// name, a semver constraint over tags (">=1.2.0 <2", "~1.4"), a full
// commit id (no network at all) or a short id of a branch or tag tip. The
// refs of a repository are cached for Options.ResolveTTL and concurrent
// resolves share the listing in flight, so a hundred applications on one
// repository cost one ls-remote per interval whatever their refs.
//
// Snapshot fetches the commit, at depth 1 by default and nothing else,
// into one bare object store per repository (and per set of credentials)
// under Options.CacheDir, shared by every revision; later fetches offer
// the commits already held, so they bring only new objects. Fetches of one
// repository run one at a time; waiting for one honours the caller's
// context. After 64 fetches a store starts a new generation directory and
// deletes the old one once no snapshot reads it, which bounds disk use and
// index loading in long-running processes; a cache directory belongs to
// one process at a time. Reading takes no repository lock: a Snapshot reads trees and
// blobs straight from the object store through its own handle, and
// TreeHash(path) returns the Git object id of a subtree, the content
// address the render cache keys on. ChangedPaths lists what differs
// between two commits by comparing tree hashes. RevisionMetadata
// (source.MetadataSource) reads a commit's author, date and message from
// the object store, fetching the commit first when it is not there.
//
// Every network operation runs under Options.Timeout (90 s) on top of the
// caller's context; a server that accepts a connection and never answers
// yields an error wrapping source.ErrTimeout. SSH goes through this
// package's own transport because go-git's dials without a context and
// handshakes without a deadline.
//
// Credentials (HTTPS basic or token, bearer, SSH key with known_hosts,
// strict by default) are bound to Credentials.Scope, by default the exact
// scheme, host and port of the repository URL. HTTP credentials are added
// per request only when the request's URL is in scope, so a redirect to
// another origin goes out anonymous; basic credentials go with the first
// request, never only after a 401 challenge (a server that answers 404
// to anonymous clients is read either way), and win over a bearer token
// with Credentials.ForceBasicAuth. Credentials.InsecureSkipTLSVerify
// accepts any server certificate, Proxy and NoProxy pick the way out;
// credentials whose Err is set are refused with it. Submodules are never
// fetched.
//
// Git LFS: when the credentials set EnableLFS, Snapshot finds the LFS
// pointer files of the commit's tree (once per commit), asks the
// repository's LFS server (lfs.url of the tree's .lfsconfig, else
// <url>.git/info/lfs) for the objects through the batch API with the
// repository's credentials, checks each object's size and sha256 and
// keeps it on disk by oid beside the object store (per repository and
// identity), so that no object is fetched twice; the snapshot then reads
// each pointer file as its object. LFSOptions bound the files looked at,
// the objects, their sizes and the time taken; failures are *LFSError
// values naming the file and the object. Errors
// are *source.Error values that carry the redacted URL and a classified
// cause (source.ErrAuthentication, ErrRepositoryNotFound, ErrTimeout,
// ErrURLNotAllowed, ...), never a secret and never the body of a server's
// error response. An optional source.URLPolicy is checked on the URL, on
// every redirect and, through the dialer, on every address connected to.
//
// Writing is one call: Commit fetches a branch's tip at depth 1 into a
// temporary store, lets the caller edit the checked-out tree in memory,
// commits and pushes only the objects the remote lacks (git-receive-pack
// over the same SSH and HTTP transports, credentials, policy and timeout).
// A branch that moved between fetch and push is ErrBranchMoved and nothing
// is written; a forced push happens only to a Target branch other than the
// Base (the image updater's write-back branches), unless ContinueTarget
// makes it a branch of its own that moves forward (a source hydrator's
// hydrateTo branch). OrphanBase creates a missing Base with an empty first
// commit, and a Note attaches a git note (refs/notes/<namespace>, read in
// git's flat and fanned-out layouts) to the commit, or to the tip when
// nothing changed, pushed with the branch in one push, atomic when the
// server offers it. CommitInClone does the same in a local clone, on its
// checked-out branch, without pushing (a CI pipeline's own commit).
//
// Local reads a repository already on disk (a CI checkout, or a bare
// repository) without fetching: revisions as `git rev-parse` names them
// (a branch missing locally tried as origin/NAME), snapshots through the
// same tree reader as Source's.
package git
