package repocreds

import (
	"strconv"
	"strings"

	"github.com/kubegitops/gitops/source"
)

// hasCredentials reports whether a Secret's settings name credentials of
// their own, as Argo CD's Repository.HasCredentials: then no template
// applies.
func hasCredentials(s settings) bool {
	for _, k := range []string{"username", "password", "bearerToken", "sshPrivateKey", "tlsClientCertData", "githubAppPrivateKey", "azureServicePrincipalClientSecret"} {
		if s.str(k) != "" {
			return true
		}
	}
	return s.flag("useAzureWorkloadIdentity")
}

// inheritedStrings are the fields a template fills in when the repository
// Secret leaves them empty (Argo CD's CopyCredentialsFrom).
var inheritedStrings = []string{"username", "password", "bearerToken", "sshPrivateKey", "tlsClientCertData", "tlsClientCertKey",
	"githubAppPrivateKey", "githubAppEnterpriseBaseUrl", "gcpServiceAccountKey",
	"azureServicePrincipalClientId", "azureServicePrincipalClientID", "azureServicePrincipalClientSecret",
	"azureServicePrincipalTenantId", "azureServicePrincipalTenantID", "azureActiveDirectoryEndpoint",
	"proxy", "noProxy", "type"}

// inherit returns repo's settings completed by template's, as Argo CD's
// CopyCredentialsFrom: empty fields filled in, forceHttpBasicAuth and
// useAzureWorkloadIdentity taken from the template, enableOCI and
// insecureOCIForceHttp set when either sets them.
func inherit(repo, template settings) settings {
	out := settings{strs: map[string]string{}, bools: map[string]bool{}, ints: map[string]int64{}}
	for k, v := range repo.strs {
		out.strs[k] = v
	}
	for k, v := range repo.bools {
		out.bools[k] = v
	}
	for k, v := range repo.ints {
		out.ints[k] = v
	}
	for _, k := range inheritedStrings {
		if out.strs[k] == "" && template.strs[k] != "" {
			out.strs[k] = template.strs[k]
		}
	}
	for _, k := range []string{"githubAppID", "githubAppInstallationID"} {
		if out.ints[k] == 0 {
			out.ints[k] = template.ints[k]
		}
	}
	out.bools["forceHttpBasicAuth"] = template.flag("forceHttpBasicAuth")
	out.bools["useAzureWorkloadIdentity"] = template.flag("useAzureWorkloadIdentity")
	out.bools["enableOCI"] = repo.flag("enableOCI") || template.flag("enableOCI")
	out.bools["insecureOCIForceHttp"] = repo.flag("insecureOCIForceHttp") || template.flag("insecureOCIForceHttp")
	return out
}

// effectiveType is the repository type of a Secret's type field: "git"
// when empty ("oci" for an oci:// URL), as Argo CD's Normalize.
func effectiveType(typ, repoURL string) string {
	switch typ {
	case "git", "helm", "oci":
		return typ
	case "":
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(repoURL)), "oci://") {
			return "oci"
		}
	}
	return "git"
}

// buildCredentials returns the static credentials and settings of a
// Secret's (merged) settings. insecure is Argo CD's: for a Git repository
// it skips the TLS verification of HTTPS and the host key check of SSH,
// as insecureIgnoreHostKey does (Argo CD's IsInsecure), for a Helm or OCI
// repository the TLS verification only.
func buildCredentials(typ string, s settings) *source.Credentials {
	c := &source.Credentials{
		Username: s.str("username"), Password: s.str("password"), BearerToken: s.str("bearerToken"),
		SSHPrivateKey: []byte(s.str("sshPrivateKey")), TLSClientCertData: []byte(s.str("tlsClientCertData")),
		TLSClientKeyData: []byte(s.str("tlsClientCertKey")), Proxy: s.str("proxy"), NoProxy: s.str("noProxy"),
		EnableOCI: s.flag("enableOCI") || typ == "oci", InsecureOCIForceHTTP: s.flag("insecureOCIForceHttp"),
		ForceBasicAuth: s.flag("forceHttpBasicAuth"), EnableLFS: s.flag("enableLfs"),
	}
	if typ == "git" {
		insecure := s.flag("insecure") || s.flag("insecureIgnoreHostKey")
		c.InsecureSkipTLSVerify, c.InsecureIgnoreHostKey = insecure, insecure
	} else {
		c.InsecureSkipTLSVerify, c.InsecureIgnoreHostKey = s.flag("insecure"), s.flag("insecureIgnoreHostKey")
	}
	return c
}

// staticCredentials returns buildCredentials, or nil when the Secret sets
// nothing it holds.
func staticCredentials(typ string, s settings) *source.Credentials {
	c := buildCredentials(typ, s)
	if c.Kind() == "none" && !c.EnableOCI && !c.InsecureOCIForceHTTP && c.Proxy == "" && !c.InsecureSkipTLSVerify &&
		!c.InsecureIgnoreHostKey && !c.ForceBasicAuth && !c.EnableLFS {
		return nil
	}
	return c
}

// azureSP returns the Azure service principal of settings (the ID
// spelling of repo-creds first, then Id), or "" ids.
func azureSP(s settings) (tenant, client, secret string) {
	client = s.str("azureServicePrincipalClientID")
	if client == "" {
		client = s.str("azureServicePrincipalClientId")
	}
	tenant = s.str("azureServicePrincipalTenantID")
	if tenant == "" {
		tenant = s.str("azureServicePrincipalTenantId")
	}
	return tenant, client, s.str("azureServicePrincipalClientSecret")
}

// minterFor returns the token minter of a Secret's settings, in Argo CD's
// order (GetGitCreds): none when a password, bearer token or SSH key is
// given; else a GitHub App (key and app id), a Google Cloud key (Git), an
// Azure workload identity, an Azure service principal (Git). secret names
// the Secret the settings come from, for errors.
func (s *Store) minterFor(secret, typ string, set settings, c *source.Credentials) (minter, error) {
	if c.Password != "" || c.BearerToken != "" || len(c.SSHPrivateKey) > 0 {
		return nil, nil
	}
	opts := s.opts
	switch {
	case set.str("githubAppPrivateKey") != "" && set.number("githubAppID") != 0:
		app, inst, key, base := set.number("githubAppID"), set.number("githubAppInstallationID"), set.str("githubAppPrivateKey"), set.str("githubAppEnterpriseBaseUrl")
		return opts.Tokens.get(digest("github-app", strconv.FormatInt(app, 10), strconv.FormatInt(inst, 10), key, base), func() (minter, error) {
			return newGitHubApp(secret, app, inst, key, base, opts.TokenTimeout)
		})
	case set.str("gcpServiceAccountKey") != "" && typ == "git":
		key := set.str("gcpServiceAccountKey")
		return opts.Tokens.get(digest("gcp", key), func() (minter, error) { return newGCPMinter(secret, key, opts) })
	case set.flag("useAzureWorkloadIdentity"):
		acr := typ != "git" || c.EnableOCI
		a := opts.Azure
		return opts.Tokens.get(digest("azure-wi", strconv.FormatBool(acr), a.ClientID, a.TenantID, a.TokenFile, a.AuthorityHost, a.ARMResource),
			func() (minter, error) { return workloadIdentityMinter(secret, acr, opts) })
	}
	if tenant, client, sp := azureSP(set); tenant != "" && client != "" && sp != "" && typ == "git" {
		authority := set.str("azureActiveDirectoryEndpoint")
		return opts.Tokens.get(digest("azure-sp", tenant, client, sp, authority), func() (minter, error) {
			return servicePrincipalMinter(tenant, client, sp, authority, opts), nil
		})
	}
	return nil, nil
}
