package luavm

import (
	"context"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

func benchRun(b *testing.B, src string, obj map[string]any) {
	vm := New(DefaultOptions())
	prog, err := vm.Compile("bench", src)
	if err != nil {
		b.Fatal(err)
	}
	read := func(lua.LValue) error { return nil }
	b.ReportAllocs()
	for b.Loop() {
		if err := vm.Run(context.Background(), prog, obj, read); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRun_Empty measures the fixed cost of one call.
func BenchmarkRun_Empty(b *testing.B) {
	benchRun(b, `return {status = "Healthy"}`, map[string]any{"metadata": map[string]any{"name": "x"}})
}

// BenchmarkRun_Certificate measures a typical script on a typical object.
func BenchmarkRun_Certificate(b *testing.B) {
	obj := map[string]any{
		"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
		"metadata": map[string]any{"name": "web", "namespace": "default", "generation": int64(1), "uid": "2b7e9b9e-4c1e-4f7a-9d55-000000000001",
			"labels": map[string]any{"app": "web"}, "annotations": map[string]any{"a": "b"}},
		"spec": map[string]any{"secretName": "web-tls", "dnsNames": []any{"web.example.com"}, "issuerRef": map[string]any{"name": "le", "kind": "ClusterIssuer"}},
		"status": map[string]any{"notAfter": "2027-02-01T10:00:00Z", "conditions": []any{
			map[string]any{"type": "Ready", "status": "True", "reason": "Ready", "message": "Certificate is up to date and has not expired", "lastTransitionTime": "2026-11-01T10:00:00Z", "observedGeneration": int64(1)},
		}},
	}
	benchRun(b, `
local hs = {}
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for certificate"
  return hs
end
for _, c in ipairs(obj.status.conditions) do
  if c.type == "Ready" and c.status == "True" then
    hs.status = "Healthy"
    hs.message = c.message
    return hs
  end
end
hs.status = "Progressing"
return hs`, obj)
}
