-- create-job runs the job now; suspend and resume toggle the schedule.
local actions = {}
local suspended = obj.spec.suspend == true
actions["create-job"] = {["iconClass"] = "fa fa-fw fa-plus", ["displayName"] = "Create Job"}
actions["suspend"] = {["disabled"] = suspended, ["iconClass"] = "fa fa-fw fa-pause-circle"}
actions["resume"] = {["disabled"] = not suspended, ["iconClass"] = "fa fa-fw fa-play-circle"}
return actions
