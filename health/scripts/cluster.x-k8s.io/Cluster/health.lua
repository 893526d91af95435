-- Cluster API Cluster: Provisioned with infrastructure and control plane
-- ready is Healthy; Failed (or a failureReason) is Degraded; a deleting
-- cluster, or any other phase, is Progressing.
local hs = {}
if obj.status == nil or obj.status.phase == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the cluster to be provisioned"
  return hs
end
local s = obj.status
if s.phase == "Failed" or s.failureReason ~= nil then
  hs.status = "Degraded"
  hs.message = (s.failureReason or "Failed") .. ": " .. (s.failureMessage or "")
  return hs
end
if s.phase == "Provisioned" and s.infrastructureReady == true and s.controlPlaneReady == true then
  hs.status = "Healthy"
  hs.message = "Cluster is provisioned"
  return hs
end
hs.status = "Progressing"
hs.message = "Cluster is " .. string.lower(s.phase)
return hs
