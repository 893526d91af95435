-- Ask the controller to promote the new pods at once.
if obj.status == nil then
  obj.status = {}
end
obj.status.promoteFull = true
return obj
