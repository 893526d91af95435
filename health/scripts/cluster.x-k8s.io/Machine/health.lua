-- Cluster API Machine: a failureReason or phase Failed is Degraded (the
-- controller will not recover it); Ready=True is Healthy; Provisioning,
-- Provisioned, Deleting and a Ready condition not yet True are Progressing.
local hs = {}
if obj.status == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to report status"
  return hs
end
if obj.status.failureReason ~= nil then
  hs.status = "Degraded"
  hs.message = obj.status.failureReason .. ": " .. (obj.status.failureMessage or "")
  return hs
end
local phase = obj.status.phase or ""
if phase == "Failed" then
  hs.status = "Degraded"
  hs.message = "Machine phase: Failed"
  return hs
end
if phase == "Deleting" or phase == "Deleted" then
  hs.status = "Progressing"
  hs.message = "Machine phase: " .. phase
  return hs
end
if obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Ready" then
      if c.status == "True" then
        hs.status = "Healthy"
        hs.message = "Machine phase: " .. phase
      else
        hs.status = "Progressing"
        hs.message = c.message or c.reason or ("Machine phase: " .. phase)
      end
      return hs
    end
  end
end
hs.status = "Progressing"
hs.message = "Machine phase: " .. phase
return hs
