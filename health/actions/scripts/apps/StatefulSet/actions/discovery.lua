local actions = {}
actions["restart"] = {["iconClass"] = "fa fa-fw fa-redo", ["displayName"] = "Restart"}
actions["scale"] = {["displayName"] = "Scale", ["params"] = {{["name"] = "replicas", ["type"] = "number"}}}
return actions
