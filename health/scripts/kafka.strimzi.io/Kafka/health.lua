-- Strimzi Kafka: Ready=True is Healthy; NotReady=True is Progressing while
-- the operator works, unless its reason says the reconciliation failed.
local hs = {}
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the cluster operator"
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
hs.message = "Waiting for the cluster operator"
return hs
