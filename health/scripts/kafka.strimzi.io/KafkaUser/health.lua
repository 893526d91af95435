-- Strimzi KafkaUser: the user operator reports Ready=True once credentials
-- and ACLs are in place, NotReady=True with an exception reason when it
-- cannot (Degraded), and NotReady while it works (Progressing).
local hs = {}
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator"
  return hs
end
if obj.status.observedGeneration ~= nil and obj.metadata.generation ~= nil and obj.status.observedGeneration < obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to observe generation " .. obj.metadata.generation
  return hs
end
for _, c in ipairs(obj.status.conditions) do
  if c.type == "Ready" and c.status == "True" then
    hs.status = "Healthy"
    hs.message = ""
    return hs
  end
  if c.type == "NotReady" and c.status == "True" then
    if c.reason ~= nil and string.find(c.reason, "Exception$") ~= nil then
      hs.status = "Degraded"
    else
      hs.status = "Progressing"
    end
    hs.message = c.message or ""
    return hs
  end
end
hs.status = "Progressing"
hs.message = "Waiting for the operator"
return hs
