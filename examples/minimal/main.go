package main

import (
	"context"
	"log"
	"os"
	"os/signal"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
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
	apps, err := gitops.LoadApplications(f)
	if err != nil {
		log.Fatal(err) // names document, line and field
	}
	opts := gitops.DefaultOptions()
	opts.Clusters = []gitops.ClusterConfig{{Name: v1alpha1.KubernetesInClusterName, Server: v1alpha1.KubernetesInternalAPIServerAddr, Config: cfg}}
	opts.Notify = func(n appstatus.Notification) { log.Printf("%s %s %s %s", n.Key, n.Type, n.Revision, n.Message) }
	engine, err := gitops.New(opts)
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	_ = engine.Run(ctx, apps) // refresh, auto-sync, self-heal until Ctrl-C
}
