-- KEDA ScaledObject: Ready=True is Healthy unless KEDA fell back to its
-- fallback replicas (Fallback=True), which means the scaler is failing.
local hs = {}
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for KEDA to report status"
  return hs
end
local ready, fallback
for _, c in ipairs(obj.status.conditions) do
  if c.type == "Ready" then ready = c end
  if c.type == "Fallback" then fallback = c end
end
if fallback ~= nil and fallback.status == "True" then
  hs.status = "Degraded"
  hs.message = fallback.message or "Scaler failed, using fallback replicas"
  return hs
end
if ready == nil or ready.status == "Unknown" then
  hs.status = "Progressing"
  hs.message = "Waiting for the ScaledObject to be ready"
elseif ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message or ""
else
  hs.status = "Degraded"
  hs.message = ready.message or ready.reason or ""
end
return hs
