-- Velero Backup: the phase decides. New, InProgress,
-- WaitingForPluginOperations and Finalizing are Progressing; Completed is
-- Healthy; PartiallyFailed, Failed and FailedValidation are Degraded (with
-- the validation errors); Deleting is Progressing.
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
local map = {["New"] = "Progressing", ["InProgress"] = "Progressing", ["WaitingForPluginOperations"] = "Progressing", ["WaitingForPluginOperationsPartiallyFailed"] = "Progressing", ["Finalizing"] = "Progressing", ["FinalizingPartiallyFailed"] = "Progressing", ["Completed"] = "Healthy", ["PartiallyFailed"] = "Degraded", ["Failed"] = "Degraded", ["FailedValidation"] = "Degraded", ["Deleting"] = "Progressing"}
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
