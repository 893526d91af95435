-- Clear the abort so the controller runs the update again.
obj.status.abort = false
return obj
