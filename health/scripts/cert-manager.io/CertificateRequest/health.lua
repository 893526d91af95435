-- cert-manager CertificateRequest: Denied=True or InvalidRequest=True is
-- Degraded; Ready=True is Healthy; Ready=False with reason Failed is
-- Degraded; Ready=False with reason Pending (waiting for approval or the
-- issuer) is Progressing.
local hs = {}
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for an issuer to act on the request"
  return hs
end
for _, c in ipairs(obj.status.conditions) do
  if c.type == "Denied" and c.status == "True" then
    hs.status = "Degraded"
    hs.message = "Denied: " .. (c.message or c.reason or "")
    return hs
  end
  if c.type == "InvalidRequest" and c.status == "True" then
    hs.status = "Degraded"
    hs.message = "InvalidRequest: " .. (c.message or c.reason or "")
    return hs
  end
end
for _, c in ipairs(obj.status.conditions) do
  if c.type == "Ready" then
    if c.status == "True" then
      hs.status = "Healthy"
      hs.message = c.message or ""
    elseif c.reason == "Failed" then
      hs.status = "Degraded"
      hs.message = c.message or ""
    else
      hs.status = "Progressing"
      hs.message = c.message or c.reason or ""
    end
    return hs
  end
end
hs.status = "Progressing"
hs.message = "Waiting for the Ready condition"
return hs
