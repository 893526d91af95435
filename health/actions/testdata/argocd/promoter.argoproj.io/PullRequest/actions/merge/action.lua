obj.spec.state = "merged"
return obj
