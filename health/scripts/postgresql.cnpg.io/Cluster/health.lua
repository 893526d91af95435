-- CloudNativePG Cluster: status.phase is the operator's summary.
local hs = {}
local phase = nil
if obj.status ~= nil then phase = obj.status.phase end
if phase == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator"
  return hs
end
local healthy = "Cluster in healthy state"
local degraded = {
  ["Failing over"] = true,
  ["Unable to create required cluster objects"] = true,
  ["Cluster cannot proceed to reconciliation due to an unknown plugin being required"] = true,
  ["Primary instance is being restarted without a switchover"] = false,
}
if phase == healthy then
  hs.status = "Healthy"
elseif degraded[phase] == true or string.find(phase, "^Unrecoverable") ~= nil then
  hs.status = "Degraded"
else
  hs.status = "Progressing"
end
hs.message = phase
if obj.status.phaseReason ~= nil and obj.status.phaseReason ~= "" then
  hs.message = phase .. ": " .. obj.status.phaseReason
end
return hs
