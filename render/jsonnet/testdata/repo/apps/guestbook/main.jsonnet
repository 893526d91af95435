local k = import 'k.libsonnet';
local params = import 'params.libsonnet';
function(name, replicas=1, image='nginx:1.27') [
  k.deployment(name, image, replicas),
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: name, labels: { env: std.extVar('env') } },
    spec: { selector: { app: name }, ports: [{ port: params.port }] },
  },
  {
    apiVersion: 'v1',
    kind: 'List',
    items: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: name + '-notes' }, data: { notes: importstr 'notes.txt' } }],
  },
]
