// Command gitopsctl is the command-line face of the gitops library and the
// example of a host program built on it.
//
//	gitopsctl cluster up [--kubeconfig-out FILE] [--apiserver-only]
//	    start a real local cluster (etcd, kube-apiserver, controllers, a kwok
//	    node), write its kubeconfig, and keep it running until Ctrl-C
//	gitopsctl cluster build
//	    build the local cluster's programs into the user cache (once)
//	gitopsctl health-test DIR
//	    run Argo CD format Lua health tests found under DIR
//
// More commands (render, diff, sync, status, agent, demo) come with the
// engine.
package main
