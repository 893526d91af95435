// Package chartserver runs real Helm chart servers on loopback for tests:
// an HTTP(S) chart repository (archives packaged by Helm's chartutil,
// index.yaml written by Helm's repo index writer, optional basic auth and
// TLS with its own CA), and charts written as folders for the engine's
// other tests; and an OCI registry (Registry) holding charts or container
// images (PushImage); and an OCI registry over HTTP or HTTPS holding OCI
// artifacts of manifests (ArtifactRegistry), as application sources. Counters report the requests each path received, so tests
// and benchmarks can assert how often an index or an archive was fetched.
package chartserver
