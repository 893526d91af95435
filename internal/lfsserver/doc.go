// Package lfsserver runs a real Git LFS server for tests: git-lfs's own
// integration-test server, lfstest-gitserver (t/cmd of the git-lfs module,
// the server the git-lfs client is tested against), built from the module
// pinned in module/ into the user cache (internal/toolbuild) and started
// as a process. It serves Git over smart HTTP (git http-backend) and the
// Git LFS batch API with its storage, on loopback.
//
// Its rules are git-lfs's: the batch endpoint wants basic credentials
// (user "user", password "pass", or user "requirecreds" with any
// password), and a repository whose name starts with "requirecreds" wants
// "requirecreds"/"pass" for its objects' storage too. CreateRepository
// writes a repository with LFS files (pointers committed, objects
// uploaded through the batch API), as `git lfs push` leaves it.
package lfsserver
