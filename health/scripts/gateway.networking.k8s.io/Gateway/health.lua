-- Gateway API Gateway: Accepted and Programmed must be True. Accepted=False
-- is a configuration error (Degraded); Programmed=False while accepted is a
-- data plane still being set up (Progressing).
local hs = {}
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the gateway controller"
  return hs
end
local accepted, programmed
for _, c in ipairs(obj.status.conditions) do
  if c.observedGeneration == nil or c.observedGeneration == obj.metadata.generation then
    if c.type == "Accepted" then accepted = c end
    if c.type == "Programmed" then programmed = c end
  end
end
if accepted ~= nil and accepted.status == "False" then
  hs.status = "Degraded"
  hs.message = accepted.reason .. ": " .. (accepted.message or "")
elseif accepted ~= nil and accepted.status == "True" and programmed ~= nil and programmed.status == "True" then
  hs.status = "Healthy"
  hs.message = "Gateway is accepted and programmed"
else
  hs.status = "Progressing"
  hs.message = "Waiting for the gateway to be accepted and programmed"
end
return hs
