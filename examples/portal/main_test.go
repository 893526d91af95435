package main

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubegitops/gitops/testenv"
)

var cluster *testenv.Cluster

func TestMain(m *testing.M) {
	// As main does: controller-runtime's process-wide logger, unset,
	// prints a stack on stderr.
	ctrllog.SetLogger(logr.Discard())
	os.Exit(testenv.RunMain(m, testenv.DefaultOptions(), &cluster))
}
