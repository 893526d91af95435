obj.spec.suspend = false
return obj
