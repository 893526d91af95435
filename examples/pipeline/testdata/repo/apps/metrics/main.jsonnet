// One exporter Deployment and its ConfigMap, in the namespace the
// Application passes as the ext var "namespace".
local ns = std.extVar('namespace');
local labels = { app: 'node-exporter' };

[
  {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'exporter-config', namespace: ns },
    data: { 'scrape-interval': '30s' },
  },
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'node-exporter', namespace: ns, labels: labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels: labels },
        spec: {
          containers: [{
            name: 'exporter',
            image: 'quay.io/prometheus/node-exporter:v1.8.2',
            resources: {
              requests: { cpu: '20m', memory: '32Mi' },
              limits: { cpu: '100m', memory: '64Mi' },
            },
          }],
        },
      },
    },
  },
]
