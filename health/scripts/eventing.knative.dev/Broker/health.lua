-- Knative Eventing Broker: Ready=True once ingress, filter and channel are
-- ready; Ready=False is Degraded; Unknown while Knative works.
local hs = {}
local status = obj.status
if status == nil or status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to report status"
  return hs
end
if status.observedGeneration ~= nil and obj.metadata.generation ~= nil and status.observedGeneration < obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to observe generation " .. obj.metadata.generation
  return hs
end
for _, c in ipairs(status.conditions) do
  if c.type == "Ready" then
    if c.status == "True" then
      hs.status = "Healthy"
    elseif c.status == "False" then
      hs.status = "Degraded"
    else
      hs.status = "Progressing"
    end
    hs.message = c.message or c.reason or ""
    return hs
  end
end
hs.status = "Progressing"
hs.message = "Waiting for the Ready condition"
return hs
