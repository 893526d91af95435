obj.spec.lifecycle.desiredPhase = "Running"
obj.spec.replicas = null
return obj