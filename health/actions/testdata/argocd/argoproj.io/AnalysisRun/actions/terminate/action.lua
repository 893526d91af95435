obj.spec.terminate = true
return obj
