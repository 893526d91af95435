-- Every Crossplane kind (wildcard): managed resources and claims report
-- Synced and Ready conditions. Synced=False means the provider cannot
-- reconcile (Degraded); Ready=True is Healthy; anything else Progressing.
-- Kinds without conditions (ProviderConfig, Usage) are Healthy.
local hs = {}
if obj.status == nil or obj.status.conditions == nil then
  if obj.kind == "ProviderConfig" or obj.kind == "ProviderConfigUsage" or obj.kind == "Usage" then
    hs.status = "Healthy"
    hs.message = "Resource has no status to check"
    return hs
  end
  hs.status = "Progressing"
  hs.message = "Waiting for resource to be created"
  return hs
end
local synced, ready
for _, c in ipairs(obj.status.conditions) do
  if c.type == "Synced" then synced = c end
  if c.type == "Ready" then ready = c end
end
if synced ~= nil and synced.status == "False" then
  hs.status = "Degraded"
  hs.message = synced.message or synced.reason
  return hs
end
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = "Resource is up-to-date."
  return hs
end
hs.status = "Progressing"
if ready ~= nil and ready.reason ~= nil then
  hs.message = "Waiting for resource to be ready: " .. ready.reason
else
  hs.message = "Waiting for resource to be ready"
end
return hs
