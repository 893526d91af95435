-- Bitnami SealedSecret: the controller sets Synced once it has unsealed
-- the secret; Synced=False means the key or the data is wrong.
local hs = {}
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to unseal the secret"
  return hs
end
for _, c in ipairs(obj.status.conditions) do
  if c.type == "Synced" then
    if c.status == "True" then
      hs.status = "Healthy"
      hs.message = "Secret unsealed"
    else
      hs.status = "Degraded"
      hs.message = c.message or "Secret could not be unsealed"
    end
    return hs
  end
end
hs.status = "Progressing"
hs.message = "Waiting for the controller to unseal the secret"
return hs
