-- Flux reconciles on request (an annotation with the request time);
-- suspend stops reconciling, resume starts it again.
local actions = {}
local suspended = obj.spec ~= nil and obj.spec.suspend == true
actions["reconcile"] = {["disabled"] = suspended, ["iconClass"] = "fa fa-fw fa-sync"}
actions["suspend"] = {["disabled"] = suspended, ["iconClass"] = "fa fa-fw fa-pause-circle"}
actions["resume"] = {["disabled"] = not suspended, ["iconClass"] = "fa fa-fw fa-play-circle"}
return actions
