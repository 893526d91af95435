package controller

import (
	"os"
	"testing"

	"github.com/kubegitops/gitops/testenv"
)

var cluster *testenv.Cluster

func TestMain(m *testing.M) {
	os.Exit(testenv.RunMain(m, testenv.DefaultOptions(), &cluster))
}
