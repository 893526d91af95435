-- Let a paused rollout continue.
obj.spec.paused = nil
return obj
