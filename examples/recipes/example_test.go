package recipes_test

import (
	"log"
	"net/http"
	"time"

	"github.com/kubegitops/gitops"
	"github.com/kubegitops/gitops/examples/recipes"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/plugin"
)

// Register the renderer for the plugin tool; other plugins still reach the
// built-in plugin renderer.
func ExampleEnvsubst() {
	opts := gitops.DefaultOptions()
	opts.Renderers = map[render.Kind]render.Renderer{
		render.KindPlugin: recipes.Envsubst{Next: plugin.New(plugin.DefaultOptions())},
	}
	_ = opts
}

// Replace the engine's health checker.
func ExampleNewHealthChecker() {
	checker, err := recipes.NewHealthChecker()
	if err != nil {
		log.Fatal(err) // a Lua script that does not compile is named here
	}
	opts := gitops.DefaultOptions()
	opts.Health = checker
	_ = opts
}

// Keep rendered manifests on disk.
func ExampleDiskStore() {
	opts := gitops.DefaultOptions()
	opts.RenderStore = &recipes.DiskStore{Dir: "/var/cache/gitops-render", TTL: 24 * time.Hour}
	_ = opts
}

// Post notifications to a chat or incident tool.
func ExampleNewWebhook() {
	hook := recipes.NewWebhook("https://hooks.example.com/gitops", recipes.WebhookOptions{
		Timeout: 5 * time.Second,
		Client:  &http.Client{Transport: http.DefaultTransport},
	})
	defer hook.Close()
	opts := gitops.DefaultOptions()
	opts.Notify = hook.Notify
	_ = opts
}
