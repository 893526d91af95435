package benchdata

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// deploymentYAML is a realistic Deployment: labels, a tracking id, probes,
// resources, env from the downward API, a volume. NAME and NS are
// replaced.
const deploymentYAML = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: NAME
  labels: {app: NAME, team: payments, tier: backend}
  annotations: {gitops.kubegitops.io/tracking-id: "shop:apps/Deployment:NS/NAME"}
spec:
  replicas: 2
  selector: {matchLabels: {app: NAME}}
  template:
    metadata: {labels: {app: NAME, team: payments}}
    spec:
      containers:
      - name: app
        image: registry.example.com/shop/app:1.2.3
        args: [--port=8080, --log-level=info]
        ports: [{name: http, containerPort: 8080}, {name: metrics, containerPort: 9090}]
        env:
        - {name: MODE, value: production}
        - {name: WORKERS, value: "4"}
        - name: POD
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        resources:
          requests: {cpu: 100m, memory: 128Mi}
          limits: {cpu: 0.5, memory: 256Mi}
        readinessProbe: {httpGet: {path: /ready, port: http}}
        livenessProbe: {httpGet: {path: /live, port: http}, initialDelaySeconds: 10}
        volumeMounts: [{name: config, mountPath: /etc/app}]
      volumes:
      - name: config
        configMap: {name: app-config}
`

// Deployment returns the realistic Deployment named name in namespace ns
// (its tracking id names app "shop"), as a manifest in Git would hold it.
func Deployment(ns, name string) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	text := strings.NewReplacer("NAME", name, "NS", ns).Replace(deploymentYAML)
	if err := yaml.Unmarshal([]byte(text), &obj.Object); err != nil {
		return nil, fmt.Errorf("benchdata: deployment %s/%s: %w", ns, name, err)
	}
	obj.SetNamespace(ns)
	return obj, nil
}
