// Command cistep is a CI pipeline step: it loads the Applications of a YAML
// file, renders each one and, given a kubeconfig, diffs it against the
// cluster, exiting 1 when any app is out of sync. Without a kubeconfig it
// renders offline and prints the manifests, as `helm template` does.
//
//	cistep --app app.yaml                                # print the manifests
//	cistep --app app.yaml --kubeconfig ~/.kube/config    # diff, exit 1 when out of sync
//
// A repoURL that is a relative path names a folder relative to the app file.
//
// Exit status: 0 in sync (or rendered), 1 out of sync, 2 when the step
// could not be made (bad flags, a file that does not load, a failed render).
package main
