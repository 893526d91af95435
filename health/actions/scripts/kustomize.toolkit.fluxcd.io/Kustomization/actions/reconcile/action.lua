-- Flux's controllers reconcile when reconcile.fluxcd.io/requestedAt
-- changes, as `flux reconcile` does.
local os = require("os")
if obj.metadata.annotations == nil then
  obj.metadata.annotations = {}
end
obj.metadata.annotations["reconcile.fluxcd.io/requestedAt"] = os.date("!%Y-%m-%dT%H:%M:%SZ")
return obj
