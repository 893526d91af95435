-- Set spec.replicas to the replicas parameter, a whole number >= 0.
local n = tonumber(actionParams["replicas"])
if n == nil or n < 0 or n ~= math.floor(n) then
  error("replicas must be a whole number >= 0, got " .. tostring(actionParams["replicas"]), 0)
end
obj.spec.replicas = n
return obj
