// Package repocreds reads repository credentials the way Argo CD stores
// them, so that a host can hand its existing Argo CD configuration to the
// engine unchanged:
//
//   - Secrets labelled argocd.argoproj.io/secret-type: repository describe
//     one repository (url, and optionally username, password, bearerToken,
//     sshPrivateKey, tlsClientCertData, tlsClientCertKey, type, enableOCI,
//     insecureOCIForceHttp (the OCI registry is reached over plain HTTP),
//     insecureIgnoreHostKey, proxy, noProxy, name, project, and a GitHub
//     App: githubAppID, githubAppInstallationID, githubAppPrivateKey,
//     githubAppEnterpriseBaseUrl, whose installation token is minted and
//     refreshed in-process, see GitHubApp);
//   - Secrets labelled argocd.argoproj.io/secret-type: repo-creds are
//     credential templates: their url is a prefix, and a repository without
//     credentials of its own (or with no Secret at all) takes those of the
//     template with the longest prefix of its URL;
//   - the ConfigMap argocd-tls-certs-cm maps a host name to PEM CA
//     certificates trusted for it, and argocd-ssh-known-hosts-cm holds the
//     ssh_known_hosts used for SSH repositories.
//
// A Secret's project field scopes it, as Argo CD's project-scoped
// repositories: ForProject gives an application of a project the Secret of
// its repository scoped to that project, else the unscoped one, never one
// scoped to another project (templates likewise, by longest prefix, the
// project's own first at equal length); For, the lookup made for no
// project, sees unscoped Secrets only.
//
// They are read from a YAML stream (Load, LoadFile) or from a namespace of
// a cluster (LoadNamespace). URLs are compared as Argo CD compares them:
// case-insensitively and without a trailing ".git" or "/".
//
// Fields Argo CD has and this package does not implement (Google Cloud
// credentials, Azure workload identity, forced basic
// auth, LFS, insecure) are refused with an *UnsupportedFieldError naming the
// Secret and the field, never ignored (their boolean ones are accepted when
// "false", which is what leaving them out means); a field Argo CD does not
// define at all (a misspelt passwd) is refused with an *UnknownFieldError. Store prints no secret (String, Format,
// MarshalJSON), and errors name Secrets and fields, never values.
package repocreds
