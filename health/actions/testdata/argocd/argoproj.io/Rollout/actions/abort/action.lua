obj.status.abort = true
return obj
