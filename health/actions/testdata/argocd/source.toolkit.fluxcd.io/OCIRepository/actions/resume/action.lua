if obj.spec.suspend ~= nil and obj.spec.suspend then
    obj.spec.suspend = false
end

return obj
