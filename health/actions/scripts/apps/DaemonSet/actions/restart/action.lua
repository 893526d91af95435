-- Roll every pod: a new annotation on the pod template makes the
-- controller replace the pods, as `kubectl rollout restart` does.
local os = require("os")
if obj.spec.template.metadata == nil then
  obj.spec.template.metadata = {}
end
if obj.spec.template.metadata.annotations == nil then
  obj.spec.template.metadata.annotations = {}
end
obj.spec.template.metadata.annotations["kubectl.kubernetes.io/restartedAt"] = os.date("!%Y-%m-%dT%H:%M:%SZ")
return obj
