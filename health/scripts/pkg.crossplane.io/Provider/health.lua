-- Crossplane Provider package: Installed and Healthy conditions must both
-- be True. An unhealthy package revision is Degraded.
local hs = {}
local installed, healthy
if obj.status ~= nil and obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Installed" then installed = c end
    if c.type == "Healthy" then healthy = c end
  end
end
if installed == nil or healthy == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the package to be installed"
elseif installed.status == "True" and healthy.status == "True" then
  hs.status = "Healthy"
  hs.message = "Package is installed and healthy"
elseif healthy.status == "False" and healthy.reason == "UnhealthyPackageRevision" then
  hs.status = "Degraded"
  hs.message = healthy.message or "Package revision is unhealthy"
else
  hs.status = "Progressing"
  hs.message = "Installed=" .. installed.status .. ", Healthy=" .. healthy.status
end
return hs
