-- RabbitMQ cluster operator RabbitmqCluster: healthy when every replica is
-- ready, the cluster is available and the last reconcile succeeded.
local hs = {}
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to report status"
  return hs
end
local state = {}
local messages = {}
for _, c in ipairs(obj.status.conditions) do
  state[c.type] = c.status
  if c.status ~= "True" and c.message ~= nil then
    table.insert(messages, c.type .. ": " .. c.message)
  end
end
if state["ReconcileSuccess"] == "False" then
  hs.status = "Degraded"
elseif state["AllReplicasReady"] == "True" and state["ClusterAvailable"] == "True" then
  hs.status = "Healthy"
else
  hs.status = "Progressing"
end
hs.message = table.concat(messages, "; ")
return hs
