-- Argo Workflows Workflow: a finite run, judged by status.phase.
local hs = {}
local phase = ""
if obj.status ~= nil and obj.status.phase ~= nil then
  phase = obj.status.phase
end
local message = ""
if obj.status ~= nil and obj.status.message ~= nil then
  message = obj.status.message
end
if phase == "" or phase == "Pending" or phase == "Running" then
  hs.status = "Progressing"
elseif phase == "Succeeded" then
  hs.status = "Healthy"
elseif phase == "Failed" or phase == "Error" then
  hs.status = "Degraded"
else
  hs.status = "Unknown"
  message = "Unknown workflow phase " .. phase
end
hs.message = message
return hs
