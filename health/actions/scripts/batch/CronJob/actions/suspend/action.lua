-- Stop scheduling new Jobs; running ones finish.
obj.spec.suspend = true
return obj
