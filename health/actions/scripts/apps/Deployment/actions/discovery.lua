-- restart and scale are always offered; pause only when the rollout is
-- running, resume only when it is paused.
local actions = {}
actions["restart"] = {["iconClass"] = "fa fa-fw fa-redo", ["displayName"] = "Restart"}
actions["scale"] = {["displayName"] = "Scale", ["params"] = {{["name"] = "replicas", ["type"] = "number"}}}
local paused = obj.spec.paused == true
actions["pause"] = {["disabled"] = paused, ["iconClass"] = "fa fa-fw fa-pause-circle"}
actions["resume"] = {["disabled"] = not paused, ["iconClass"] = "fa fa-fw fa-play-circle"}
return actions
