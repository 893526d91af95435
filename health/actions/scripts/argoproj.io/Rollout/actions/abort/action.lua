-- Ask the controller to scale the new pods down and go back to stable.
if obj.status == nil then
  obj.status = {}
end
obj.status.abort = true
return obj
