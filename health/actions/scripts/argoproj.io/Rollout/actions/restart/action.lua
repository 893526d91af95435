-- The Rollouts controller replaces every pod created before spec.restartAt.
local os = require("os")
obj.spec.restartAt = os.date("!%Y-%m-%dT%H:%M:%SZ")
return obj
