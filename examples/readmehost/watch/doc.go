// Command watch is a tiny controller: it runs an engine over the Application
// files of a folder (*.yaml, *.yml, *.json), printing each change of an app's
// sync status, health or revision and each notification, until SIGINT or
// SIGTERM, when it stops the engine and exits 0.
//
//	watch --apps apps/ --kubeconfig ~/.kube/config
//
// The kubeconfig's current context is the in-cluster destination
// (https://kubernetes.default.svc, "in-cluster"); every context is also a
// destination by its name and its server URL.
package main
