obj.spec.pause = true
return obj
