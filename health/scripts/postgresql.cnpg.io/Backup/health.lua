-- CloudNativePG Backup: pending, started, running and finalizing are
-- Progressing, completed is Healthy, failed is Degraded with the error the
-- operator recorded.
local hs = {}
local phase = nil
if obj.status ~= nil then
  phase = obj.status.phase
end
if phase == nil or phase == "" then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to report a phase"
  return hs
end
local map = {["pending"] = "Progressing", ["started"] = "Progressing", ["running"] = "Progressing", ["finalizing"] = "Progressing", ["walArchivingFailing"] = "Degraded", ["completed"] = "Healthy", ["failed"] = "Degraded"}
hs.status = map[phase] or "Unknown"
hs.message = "Backup phase: " .. phase
local detail = nil
if obj.status.message ~= nil and obj.status.message ~= "" then
  detail = obj.status.message
elseif obj.status.validationErrors ~= nil and #obj.status.validationErrors > 0 then
  detail = table.concat(obj.status.validationErrors, "; ")
elseif obj.status.error ~= nil and obj.status.error ~= "" then
  detail = obj.status.error
end
if detail ~= nil then
  hs.message = hs.message .. ": " .. detail
end
return hs
