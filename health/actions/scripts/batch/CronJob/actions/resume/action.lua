-- Schedule Jobs again.
obj.spec.suspend = false
return obj
