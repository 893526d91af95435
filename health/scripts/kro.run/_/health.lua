-- kro (wildcard kind in the kro.run group): instances of any
-- ResourceGraphDefinition report state (ACTIVE, IN_PROGRESS, FAILED, ...)
-- and a Ready condition.
local hs = {}
if obj.status == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for kro to reconcile"
  return hs
end
local state = obj.status.state
local ready = nil
if obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Ready" or c.type == "InstanceSynced" then ready = c end
  end
end
if state == "FAILED" or state == "ERROR" or (ready ~= nil and ready.status == "False" and ready.reason ~= nil and string.find(string.lower(ready.reason), "fail") ~= nil) then
  hs.status = "Degraded"
  hs.message = (ready ~= nil and ready.message) or ("state " .. tostring(state))
elseif state == "ACTIVE" and (ready == nil or ready.status == "True") then
  hs.status = "Healthy"
  hs.message = "state ACTIVE"
else
  hs.status = "Progressing"
  hs.message = "state " .. tostring(state)
end
return hs
