if obj.spec == nil then
  obj.spec = {}
end
obj.spec.cordoned = true
return obj
