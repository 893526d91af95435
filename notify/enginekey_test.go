package notify

import (
	"testing"

	"github.com/kubegitops/gitops/apis/v1alpha1"
	"github.com/kubegitops/gitops/appstatus"
)

// TestNotifyTellsNamespacesApart: two apps named web in two namespaces
// are two apps to Notify. A sync started in team-a leaves team-b's status
// alone, so the trigger on a running operation fires for team-a only
// (keyed by the bare name, team-b inherited team-a's operation and fired
// too).
func TestNotifyTellsNamespacesApart(t *testing.T) {
	recv := newReceiver(t)
	cfg := mustLoad(t, map[string]string{
		"service.webhook.hook": "url: " + recv.URL,
		"template.running":     "webhook:\n  hook:\n    method: POST\n    body: '{{.app.metadata.namespace}} {{.app.status.operationState.phase}}'\n",
		"trigger.on-running":   "- when: app.status.operationState != nil && app.status.operationState.phase == 'Running'\n  send: [running]",
	}, nil)
	apps := map[v1alpha1.AppKey]*v1alpha1.Application{}
	for _, ns := range []string{"team-a", "team-b"} {
		app := &v1alpha1.Application{Spec: v1alpha1.ApplicationSpec{Source: &v1alpha1.ApplicationSource{RepoURL: "https://example.com/r.git"},
			Destination: v1alpha1.ApplicationDestination{Server: "https://kubernetes.default.svc", Namespace: "web"}}}
		app.Namespace, app.Name = ns, "web"
		app.Annotations = map[string]string{"notifications.argoproj.io/subscribe.on-running.hook": ""}
		apps[v1alpha1.KeyOf(app)] = app
	}
	c, err := NewController(cfg, ControllerOptions{
		ApplicationOf: func(key v1alpha1.AppKey) (*v1alpha1.Application, bool) { app, ok := apps[key]; return app, ok }})
	if err != nil {
		t.Fatal(err)
	}
	runController(t, c)
	a, b := v1alpha1.AppKey{Namespace: "team-a", Name: "web"}, v1alpha1.AppKey{Namespace: "team-b", Name: "web"}
	c.Notify(appstatus.Notification{Type: appstatus.NotifySyncStarted, Key: a, Revision: "abc"})
	c.Notify(appstatus.Notification{Type: appstatus.NotifySyncStatusChanged, Key: b, Revision: "abc", Sync: appstatus.Synced})
	waitFor(t, "the running webhook", func() bool { return len(recv.requests()) >= 1 })
	waitFor(t, "all evaluated", c.Idle)
	if got := recv.requests(); len(got) != 1 || got[0].Body != "team-a Running" {
		t.Fatalf("requests %+v, want one: team-a Running", got)
	}
}
