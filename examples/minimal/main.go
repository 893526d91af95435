package main

import (
	"context"
	"log"
	"os"
	"os/signal"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
	"github.com/kubegitops/gitops/engine"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		log.Fatal(err)
	}
	f, err := os.Open("apps.yaml") // Argo CD Application manifests
	if err != nil {
		log.Fatal(err)
	}
	apps, err := v1alpha1.LoadApplications(f)
	if err != nil {
		log.Fatal(err) // names document, line and field
	}
	opts := engine.DefaultOptions() // the lean core: plain manifests; gitops.DefaultOptions adds Helm, Kustomize, ...
	opts.Clusters = []engine.ClusterConfig{{Name: v1alpha1.KubernetesInClusterName, Server: v1alpha1.KubernetesInternalAPIServerAddr, Config: cfg}}
	opts.Notify = func(n appstatus.Notification) { log.Printf("%s %s %s %s", n.Key, n.Type, n.Revision, n.Message) }
	e, err := engine.New(opts)
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	_ = e.Run(ctx, apps) // refresh, auto-sync, self-heal until Ctrl-C
}
