-- Istio VirtualService: istiod writes analysis results to
-- status.validationMessages when status reporting is on. An ERROR message is
-- Degraded; WARNING messages are listed on a Healthy object; a status not
-- yet observed for the latest generation is Progressing; no status at all is
-- Healthy (status reporting is off by default).
local hs = {}
local status = obj.status
if status == nil then
  hs.status = "Healthy"
  hs.message = ""
  return hs
end
if status.observedGeneration ~= nil and obj.metadata.generation ~= nil and tonumber(status.observedGeneration) < obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for istiod to observe generation " .. obj.metadata.generation
  return hs
end
local warnings = {}
if status.validationMessages ~= nil then
  for _, m in ipairs(status.validationMessages) do
    local code = ""
    if m.type ~= nil and m.type.code ~= nil then
      code = m.type.code
    end
    if m.level == "ERROR" or m.level == 3 then
      hs.status = "Degraded"
      hs.message = "Istio analysis error " .. code
      return hs
    end
    if m.level == "WARNING" or m.level == 8 then
      table.insert(warnings, code)
    end
  end
end
hs.status = "Healthy"
if #warnings > 0 then
  hs.message = "Istio analysis warnings: " .. table.concat(warnings, ", ")
else
  hs.message = ""
end
return hs
