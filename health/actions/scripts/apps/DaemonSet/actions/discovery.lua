-- A DaemonSet runs one pod per node: it can be restarted, not scaled.
local actions = {}
actions["restart"] = {["iconClass"] = "fa fa-fw fa-redo", ["displayName"] = "Restart"}
return actions
