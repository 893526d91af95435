-- Stop the rollout where it is; pods already rolled stay.
obj.spec.paused = true
return obj
