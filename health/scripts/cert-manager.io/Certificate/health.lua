-- cert-manager Certificate.
-- Progressing while a certificate is being issued (Issuing=True) or before
-- the controller reports; Healthy when Ready=True; Degraded when Ready=False
-- and nothing is being issued.
local hs = {}
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for certificate"
  return hs
end
local ready = nil
local issuing = nil
for _, c in ipairs(obj.status.conditions) do
  if c.type == "Ready" then ready = c end
  if c.type == "Issuing" then issuing = c end
end
if issuing ~= nil and issuing.status == "True" then
  hs.status = "Progressing"
  hs.message = "Issuing certificate: " .. (issuing.message or "")
  return hs
end
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message or ""
  return hs
end
if ready ~= nil and ready.status == "False" then
  hs.status = "Degraded"
  hs.message = ready.message or ready.reason or ""
  return hs
end
hs.status = "Progressing"
hs.message = "Waiting for certificate"
return hs
