-- prometheus-operator ThanosRuler: the Available condition says whether the
-- StatefulSet replicas serve (True Healthy, Degraded Degraded, otherwise
-- Progressing); Reconciled=False is an operator error (Degraded).
local hs = {}
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to report status"
  return hs
end
for _, c in ipairs(obj.status.conditions) do
  if c.type == "Reconciled" and c.status == "False" then
    hs.status = "Degraded"
    hs.message = c.message or c.reason
    return hs
  end
end
for _, c in ipairs(obj.status.conditions) do
  if c.type == "Available" then
    if c.status == "True" then
      hs.status = "Healthy"
      hs.message = ""
    elseif c.status == "Degraded" then
      hs.status = "Degraded"
      hs.message = c.message or ""
    else
      hs.status = "Progressing"
      hs.message = c.message or ""
    end
    return hs
  end
end
hs.status = "Progressing"
hs.message = "Waiting for the Available condition"
return hs
