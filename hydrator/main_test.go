package hydrator_test

import (
	"os"
	"testing"

	"github.com/kubegitops/gitops/testenv"
)

// cluster is the local cluster the apps hydrated here sync to.
var cluster *testenv.Cluster

func TestMain(m *testing.M) {
	os.Exit(testenv.RunMain(m, testenv.DefaultOptions(), &cluster))
}
