-- Argo Rollouts Rollout.
-- The controller publishes its own verdict in status.phase (Healthy,
-- Progressing, Paused, Degraded) once it has observed the spec; an aborted
-- rollout is Degraded; a paused one Suspended.
local hs = {}
if obj.status == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for rollout spec update to be observed"
  return hs
end
local observed = obj.status.observedGeneration
if observed ~= nil and tostring(observed) ~= tostring(obj.metadata.generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for rollout spec update to be observed"
  return hs
end
if obj.status.abort == true then
  hs.status = "Degraded"
  hs.message = obj.status.message or "Rollout aborted"
  return hs
end
if obj.spec ~= nil and obj.spec.paused == true then
  hs.status = "Suspended"
  hs.message = "Rollout is paused"
  return hs
end
local phase = obj.status.phase
if phase == "Paused" then
  hs.status = "Suspended"
  hs.message = obj.status.message or "Rollout is paused"
  return hs
end
if phase == "Healthy" or phase == "Progressing" or phase == "Degraded" then
  hs.status = phase
  hs.message = obj.status.message or ""
  return hs
end
hs.status = "Progressing"
hs.message = "Waiting for rollout to report a phase"
return hs
