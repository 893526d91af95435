-- A rollout is done when the pods of the current template are the stable
-- ones. promote-full skips the remaining steps, analysis and pauses of an
-- update in progress; abort goes back to the stable pods; retry starts an
-- aborted update again; restart replaces the pods.
local actions = {}
local status = obj.status or {}
local done = status.currentPodHash ~= nil and status.currentPodHash == status.stableRS
local aborted = status.abort == true
actions["restart"] = {["iconClass"] = "fa fa-fw fa-redo", ["displayName"] = "Restart"}
actions["promote-full"] = {["disabled"] = done or aborted, ["iconClass"] = "fa fa-fw fa-angle-double-right", ["displayName"] = "Promote-Full"}
actions["abort"] = {["disabled"] = done or aborted, ["iconClass"] = "fa fa-fw fa-times-circle"}
actions["retry"] = {["disabled"] = not aborted, ["iconClass"] = "fa fa-fw fa-redo-alt"}
return actions
