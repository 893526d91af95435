-- Gateway API GRPCRoute: each parent Gateway reports Accepted and
-- ResolvedRefs. Any parent refusing the route, or a reference that does not
-- resolve, is Degraded; no parent status yet is Progressing.
local hs = {}
if obj.status == nil or obj.status.parents == nil or #obj.status.parents == 0 then
  hs.status = "Progressing"
  hs.message = "Waiting for a parent gateway to accept the route"
  return hs
end
for _, p in ipairs(obj.status.parents) do
  local name = "unknown"
  if p.parentRef ~= nil and p.parentRef.name ~= nil then name = p.parentRef.name end
  if p.conditions ~= nil then
    for _, c in ipairs(p.conditions) do
      if (c.type == "Accepted" or c.type == "ResolvedRefs") and c.status == "False" then
        hs.status = "Degraded"
        hs.message = "Parent " .. name .. ": " .. c.type .. "=False: " .. (c.message or c.reason or "")
        return hs
      end
    end
  end
end
hs.status = "Healthy"
hs.message = "Route accepted by " .. #obj.status.parents .. " parent(s)"
return hs
