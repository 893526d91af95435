// Package repocreds reads repository credentials the way Argo CD stores
// them, so that a host can hand its existing Argo CD configuration to the
// engine unchanged:
//
//   - Secrets labelled argocd.argoproj.io/secret-type: repository describe
//     one repository; those labelled repo-creds are credential templates,
//     whose url is a prefix: a repository without credentials of its own
//     (or with no Secret at all) takes those of the template with the
//     longest prefix of its URL (Store.ForProject tells the whole rule);
//   - the ConfigMap argocd-tls-certs-cm maps a host name to PEM CA
//     certificates trusted for it, and argocd-ssh-known-hosts-cm holds the
//     ssh_known_hosts used for SSH repositories;
//   - Secrets labelled repository-write and repo-write-creds are the write
//     credentials of Argo CD's source hydrator (package hydrator): they
//     serve its pushes only (WriteForProject, by the same rules over the
//     write Secrets alone), never a read, and the repository and
//     repo-creds Secrets never serve a push.
//
// Every field of Argo CD v3.6's repository and repo-creds Secrets is read
// as Argo CD defines it: url, type, name, project, username, password,
// bearerToken, sshPrivateKey, tlsClientCertData, tlsClientCertKey, proxy
// and noProxy (the Git and Helm transports go through the proxy, except to
// the noProxy hosts), enableOCI, insecureOCIForceHttp (the OCI registry is
// reached over plain HTTP), insecureIgnoreHostKey, insecure (no TLS
// verification; for Git no host key check either), forceHttpBasicAuth
// (basic auth even when a bearer token is set; basic credentials are
// always sent with the first request), enableLfs (Git snapshots hold the
// content of Git LFS objects, see source/git), a GitHub App (githubAppID,
// githubAppInstallationID, githubAppPrivateKey, githubAppEnterpriseBaseUrl:
// its installation token is minted in-process, see GitHubApp),
// gcpServiceAccountKey (a Google Cloud access token), useAzureWorkloadIdentity
// (Microsoft Entra ID tokens of the process's AzureWorkloadIdentity), an
// Azure service principal (azureServicePrincipalClientId, -ClientSecret,
// -TenantId, azureActiveDirectoryEndpoint). Tokens are minted when a
// repository is looked up and reused until 5 minutes before they expire.
// depth and webhookManifestCacheWarmDisabled, which tune what other Argo CD
// components do, are accepted without effect and named in a Warning.
//
// One field never costs the rest of its Secret: a field Argo CD does not
// read on that kind of Secret, or does not define at all (a misspelt
// passwd), is ignored and named in a Warning (Store.Warnings); a field
// whose value is malformed (enableLfs: "maybe") keeps the Secret loaded
// but makes the credentials of the repositories it serves carry a
// *FieldError (source.Credentials.Err), so that their apps, and only
// theirs, are refused with a message naming the Secret and the field,
// rather than read without it. Only a Secret without a url is left out.
//
// A Secret's project field scopes it, as Argo CD's project-scoped
// repositories: ForProject gives an application of a project the Secret of
// its repository scoped to that project, else the unscoped one, never one
// scoped to another project (templates likewise, by longest prefix, the
// project's own first at equal length); For, the lookup made for no
// project, sees unscoped Secrets only.
//
// URLs are compared as Argo CD compares them (its NormalizeGitURL:
// case-insensitively, without a trailing ".git", an scp-like SSH URL like
// its ssh:// form), and an OCI registry's URL with or without its oci://
// scheme, as Argo CD matches Helm charts' repositories (see lookupForms).
//
// They are read from a YAML stream (Load, LoadFile) or from a namespace of
// a cluster (LoadNamespace, LoadNamespaceSkipping), with Options
// (LoadWith, LoadNamespaceWith). Store prints no secret (String, Format,
// MarshalJSON), and errors and Warnings name Secrets and fields, never
// values.
package repocreds
