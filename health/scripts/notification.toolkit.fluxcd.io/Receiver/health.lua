-- Flux Receiver: a webhook endpoint that triggers reconciliations. Suspended
-- when spec.suspend is set; otherwise the kstatus conditions (Stalled,
-- Reconciling, Ready) decide once the controller has observed the latest
-- generation.
local hs = {}
if obj.spec ~= nil and obj.spec.suspend == true then
  hs.status = "Suspended"
  hs.message = "Reconciliation is suspended"
  return hs
end
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to report status"
  return hs
end
if obj.status.observedGeneration ~= nil and obj.metadata.generation ~= nil and obj.status.observedGeneration < obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to observe generation " .. obj.metadata.generation
  return hs
end
local ready = nil
for _, c in ipairs(obj.status.conditions) do
  if c.type == "Stalled" and c.status == "True" then
    hs.status = "Degraded"
    hs.message = c.message or c.reason or ""
    return hs
  end
  if c.type == "Reconciling" and c.status == "True" then
    hs.status = "Progressing"
    hs.message = c.message or c.reason or ""
    return hs
  end
  if c.type == "Ready" then
    ready = c
  end
end
if ready == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the Ready condition"
elseif ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message or ""
elseif ready.status == "False" then
  hs.status = "Degraded"
  hs.message = (ready.reason or "NotReady") .. ": " .. (ready.message or "")
else
  hs.status = "Progressing"
  hs.message = ready.message or ""
end
return hs
