// Package plugin renders applications by running a configured command, as
// Argo CD's config management plugins do, with the isolation Argo CD lacks
// by default (argo-cd#27522, argo-cd#8820).
//
// Rules:
//   - only commands configured in Options.Plugins run; Input.Plugin.Name
//     selects one, and an unknown name fails;
//   - the command runs in a private copy of the application directory: a
//     fresh directory with a random name and mode 0700 under
//     Options.TempDir, filled through a render.Root (so the copy obeys the
//     byte and file budgets and symbolic links that leave the tree fail);
//     the copy is removed afterwards even if the plugin made files
//     unreadable or directories unsearchable;
//   - the environment is built, not inherited: the variables named in
//     Plugin.Env are copied from the host, PATH defaults to
//     /usr/local/bin:/usr/bin:/bin, HOME and TMPDIR point into the copy,
//     and Argo CD's build variables are set (ARGOCD_APP_NAME,
//     ARGOCD_APP_NAMESPACE, ARGOCD_APP_SOURCE_PATH, KUBE_VERSION,
//     KUBE_API_VERSIONS, then whatever Input.Plugin.BuildEnv holds, such
//     as the engine's ARGOCD_APP_REVISION and ARGOCD_APP_SOURCE_REPO_URL,
//     and ARGOCD_ENV_<name> for Input.Plugin.Env);
//     Plugin.Credentials are added only when Plugin.GrantCredentials is set;
//   - the command is killed (its whole process group) at Plugin.Timeout,
//     and when its standard output passes Plugin.MaxOutputBytes;
//   - the output is a YAML or JSON stream decoded by resource.Decode; on
//     failure the error carries the tail of standard error with every
//     credential value masked.
//
// Credentials enter the cache key only as SHA-256 digests.
package plugin
