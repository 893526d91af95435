// Command minimal is the smallest complete host of the gitops engine: it
// loads Argo CD Application manifests and keeps them reconciled.
package main
