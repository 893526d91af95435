-- Create a Job from the CronJob's jobTemplate now, as
-- `kubectl create job --from=cronjob/NAME` does: the template's labels
-- and annotations, the annotation cronjob.kubernetes.io/instantiate=manual,
-- and the CronJob as controlling owner. The name is the CronJob's name and
-- the current Unix time, cut so that it stays a valid label value.
local os = require("os")
local tmpl = obj.spec.jobTemplate
local meta = {}
local suffix = "-" .. tostring(os.time())
local base = obj.metadata.name
if #base + #suffix > 63 then
  base = string.sub(base, 1, 63 - #suffix)
end
meta.name = base .. suffix
meta.namespace = obj.metadata.namespace
meta.labels = {}
meta.annotations = {}
if tmpl.metadata ~= nil then
  if tmpl.metadata.labels ~= nil then
    for k, v in pairs(tmpl.metadata.labels) do meta.labels[k] = v end
  end
  if tmpl.metadata.annotations ~= nil then
    for k, v in pairs(tmpl.metadata.annotations) do meta.annotations[k] = v end
  end
end
meta.annotations["cronjob.kubernetes.io/instantiate"] = "manual"
meta.ownerReferences = {{
  apiVersion = obj.apiVersion,
  kind = obj.kind,
  name = obj.metadata.name,
  uid = obj.metadata.uid,
  controller = true,
  blockOwnerDeletion = true,
}}
local job = {apiVersion = "batch/v1", kind = "Job", metadata = meta, spec = tmpl.spec}
return {{operation = "create", resource = job}}
