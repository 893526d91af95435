package v1alpha1

// SourceIntegrity are an AppProject's criteria for its apps' sources
// (Argo CD's source integrity): today GnuPG signatures of Git sources.
type SourceIntegrity struct {
	// Git are the policies of Git sources.
	Git *SourceIntegrityGit `json:"git"`
}

// SourceIntegrityGit holds the policies of Git sources.
type SourceIntegrityGit struct {
	// Policies each apply to the repositories their repos select. A
	// source whose repository no policy selects is not verified; one that
	// two policies select fails (a mistake in the project must not turn
	// verification off).
	Policies []SourceIntegrityGitPolicy `json:"policies"`
}

// SourceIntegrityGitPolicy is how the sources of some repositories are
// verified.
type SourceIntegrityGitPolicy struct {
	// Repos select the repositories: a repository is selected when its
	// URL matches a url without "!" and none with "!".
	Repos []SourceIntegrityGitPolicyRepo `json:"repos"`
	// GPG verifies GnuPG signatures of commits and annotated tags.
	GPG *SourceIntegrityGitPolicyGPG `json:"gpg"`
}

// SourceIntegrityGitPolicyRepo selects repositories by URL.
type SourceIntegrityGitPolicyRepo struct {
	// URL is a glob of repository URLs, matched as written (no
	// normalisation); a leading "!" excludes the URLs it matches.
	URL string `json:"url"`
}

// SourceIntegrityGitPolicyGPGMode says how much of a revision's history
// is verified.
type SourceIntegrityGitPolicyGPGMode string

// The GnuPG verification modes.
const (
	// SourceIntegrityGitPolicyGPGModeNone verifies nothing, and no other
	// policy is tried.
	SourceIntegrityGitPolicyGPGModeNone SourceIntegrityGitPolicyGPGMode = "none"
	// SourceIntegrityGitPolicyGPGModeHead verifies the synced revision
	// only: the annotated tag when the target revision is one, else the
	// commit.
	SourceIntegrityGitPolicyGPGModeHead SourceIntegrityGitPolicyGPGMode = "head"
	// SourceIntegrityGitPolicyGPGModeStrict verifies the annotated tag (if
	// any), the commit and all its ancestors back to the most recent
	// correctly signed seal commits (a commit whose message has an
	// "Argocd-gpg-seal:" trailer) or the first commit.
	SourceIntegrityGitPolicyGPGModeStrict SourceIntegrityGitPolicyGPGMode = "strict"
)

// SourceIntegrityGitPolicyGPG verifies that commits and tags are signed,
// correctly, by a key of argocd-gpg-keys-cm that Keys lists.
type SourceIntegrityGitPolicyGPG struct {
	// Mode is none, head or strict. Another value fails the sources the
	// policy selects, naming it.
	Mode SourceIntegrityGitPolicyGPGMode `json:"mode"`
	// Keys are the IDs of the keys to trust (16 hexadecimal digits or a
	// 40-digit fingerprint); a signature by a subkey counts as its primary
	// key's. Each must also be in argocd-gpg-keys-cm.
	Keys []string `json:"keys"`
}

// EffectiveSourceIntegrity returns the project's criteria with its
// signatureKeys read as Argo CD reads them: without signatureKeys,
// SourceIntegrity; otherwise, unless SourceIntegrity has git policies
// (which then win, and signatureKeys are ignored), one git policy for
// every repository ("*") of mode head with those keys. The project is not
// modified.
func (p *AppProject) EffectiveSourceIntegrity() *SourceIntegrity {
	if len(p.Spec.SignatureKeys) == 0 {
		return p.Spec.SourceIntegrity
	}
	if si := p.Spec.SourceIntegrity; si != nil && si.Git != nil {
		return si
	}
	keys := make([]string, 0, len(p.Spec.SignatureKeys))
	for _, k := range p.Spec.SignatureKeys {
		keys = append(keys, k.KeyID)
	}
	return &SourceIntegrity{Git: &SourceIntegrityGit{Policies: []SourceIntegrityGitPolicy{{
		Repos: []SourceIntegrityGitPolicyRepo{{URL: "*"}},
		GPG:   &SourceIntegrityGitPolicyGPG{Mode: SourceIntegrityGitPolicyGPGModeHead, Keys: keys},
	}}}}
}
