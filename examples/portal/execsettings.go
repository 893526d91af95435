package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	gosync "sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// argocd-cm's keys for the Pod terminal, as Argo CD reads them.
const (
	// execEnabledKey turns the terminal on ("true"); off without it.
	execEnabledKey = "exec.enabled"
	// execShellsKey lists the shells tried in order, comma-separated.
	execShellsKey = "exec.shells"
)

// defaultExecShells are Argo CD's shells when exec.shells is not set.
var defaultExecShells = []string{"bash", "sh", "powershell", "cmd"}

// execSettings are argocd-cm's terminal settings.
type execSettings struct {
	// Enabled is exec.enabled: the terminal is refused while it is false.
	Enabled bool
	// Shells is exec.shells (or defaultExecShells): the first that
	// starts in the container is the terminal's.
	Shells []string
}

// parseExecSettings reads exec.enabled and exec.shells from argocd-cm's
// data (nil: the ConfigMap is missing, the terminal off). A value of
// exec.enabled that is not a boolean is an error naming the key, and
// leaves the terminal off.
func parseExecSettings(data map[string]string) (execSettings, error) {
	st := execSettings{Shells: defaultExecShells}
	if v := strings.TrimSpace(data[execShellsKey]); v != "" {
		st.Shells = nil
		for _, sh := range strings.Split(v, ",") {
			if sh = strings.TrimSpace(sh); sh != "" {
				st.Shells = append(st.Shells, sh)
			}
		}
	}
	if v, ok := data[execEnabledKey]; ok && strings.TrimSpace(v) != "" {
		on, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return execSettings{Shells: st.Shells}, fmt.Errorf("ConfigMap %s: %s: %q is not true or false", argoCDConfigMapName, execEnabledKey, v)
		}
		st.Enabled = on
	}
	return st, nil
}

// execState holds the terminal settings in force; the zero value (and a
// nil one) has the terminal off, as Argo CD without exec.enabled.
type execState struct {
	mu gosync.RWMutex
	st execSettings
}

// get returns the settings in force.
func (e *execState) get() execSettings {
	if e == nil {
		return execSettings{}
	}
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.st
}

// apply replaces the settings with argocd-cm's data; an unreadable value
// turns the terminal off and is returned.
func (e *execState) apply(data map[string]string) error {
	st, err := parseExecSettings(data)
	e.mu.Lock()
	e.st = st
	e.mu.Unlock()
	return err
}

// watchExecSettings keeps st equal to argocd-cm's terminal keys in
// namespace ns until ctx ends: a change applies to the next terminal
// opened, as Argo CD's API server reads them. A bad value is reported to
// log (and turns the terminal off).
func watchExecSettings(ctx context.Context, kube kubernetes.Interface, ns string, st *execState, log io.Writer) {
	report := func(err error) {
		if err != nil {
			fmt.Fprintf(log, "portal: --rbac-namespace %s: %v; the Pod terminal is off\n", ns, err)
		}
	}
	cm := informerOf[*corev1.ConfigMap](kube, ns, argoCDConfigMapName, func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
		return f.Core().V1().ConfigMaps().Informer()
	})
	watchNamed(cm, func(c *corev1.ConfigMap) { report(st.apply(c.Data)) }, func() { report(st.apply(nil)) })
	cm.factory.Start(ctx.Done())
	<-ctx.Done()
	cm.factory.Shutdown()
}
