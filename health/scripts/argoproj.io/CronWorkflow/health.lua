-- Argo Workflows CronWorkflow: a schedule is Healthy while it can submit
-- workflows; spec.suspend is Suspended; a SpecError or SubmissionError
-- condition (the last submission failed) is Degraded with its message.
local hs = {}
if obj.spec ~= nil and obj.spec.suspend == true then
  hs.status = "Suspended"
  hs.message = "CronWorkflow is suspended"
  return hs
end
if obj.status ~= nil and obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    if (c.type == "SpecError" or c.type == "SubmissionError") and c.status == "True" then
      hs.status = "Degraded"
      hs.message = c.type .. ": " .. (c.message or "")
      return hs
    end
  end
end
hs.status = "Healthy"
hs.message = ""
return hs
