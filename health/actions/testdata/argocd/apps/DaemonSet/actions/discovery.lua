local actions = {}
 
actions["restart"] = {
    ["iconClass"] = "fa fa-fw fa-redo"
}
 
return actions
