// Package helm renders Helm charts in-process with helm.sh/helm/v3, as
// `helm template` does, with no helm binary and no network by default.
//
// The chart is the application directory. Its files are read through a
// render.Root (so a symlink that leaves the tree, or a chart too large,
// fails), .helmignore is honoured, and sub-charts come from charts/ (as
// directories or archives; archives are checked against the render's byte
// and file budgets before Helm decompresses them, so a gzip bomb fails with
// render.ErrTooLarge). A dependency declared in Chart.yaml and missing from
// charts/ fails with render.ErrRemoteDisabled unless Options.
// FetchDependencies is set; then it is downloaded from its http(s) chart
// repository at the version Chart.lock pins, into memory, once per
// Renderer (concurrent renders share one download), within the budgets.
// With Options.Dependencies set (the engine sets it), missing
// dependencies from http(s) and oci:// repositories are fetched through
// that DependencyFetcher instead, which is handed HelmSource.
// DependencyRepos (the app project's sourceRepos) to refuse repositories
// outside them; the version a constraint resolved to names the archive.
//
// Values are merged as Argo CD and Helm do: the chart's values.yaml, then
// ValueFiles in order, then the inline Values document, then ValuesObject,
// then Parameters (--set, or --set-string with ForceString), then
// FileParameters (--set-file). Value files and file parameters are paths
// relative to the chart, resolved inside the root: "..", absolute paths and
// anything with a URL scheme are refused before any read
// (render.ErrOutsideRoot, render.ErrAbsolutePath,
// render.ErrSchemeNotAllowed), unless the scheme is in
// Options.AllowedValueSchemes, in which case http and https value files are
// fetched with a timeout and a size cap. Error messages name the file,
// never its content.
//
// Rendering takes the steps Helm's action.Install takes for `helm
// template` (DryRun, ClientOnly, Replace) through Helm's engine, chartutil
// and releaseutil, without the action package: dependency conditions,
// tags and import-values, values.schema.json (unless
// SkipSchemaValidation), the release name (HelmSource.ReleaseName, else
// the application name, else "release-name"), the destination namespace,
// revision 1, IsInstall (IsUpgrade with HelmSource.IsUpgrade), Helm's
// default capabilities with the target cluster's Input.KubeVersion and
// Input.APIVersions, and the chart's kubeVersion constraint. Library
// charts are refused with render.ErrInvalidInput, as `helm template`
// refuses them. NOTES.txt is never rendered into objects. CRDs from crds/
// come first unless SkipCRDs, then the templates in Helm's install order;
// test hooks are dropped with SkipTests. Hooks come out as ordinary objects
// that keep their helm.sh/hook, helm.sh/hook-weight and
// helm.sh/hook-delete-policy annotations, after the other objects, in the
// order `helm template` prints them; the sync engine maps them to phases.
//
// The template function lookup returns an empty map, exactly as in
// `helm template`: the renderer has no cluster client, by design (a render
// must be a function of the files and options, or the cache would lie, and
// lookup with the controller's credentials crossed tenants in Argo CD,
// argo-cd#3661). Charts that need live state must get it through values.
package helm
