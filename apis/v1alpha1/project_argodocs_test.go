package v1alpha1

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/kubegitops/gitops/internal/argodocs"
)

// TestLoadsArgoCDsDocumentedProject loads docs/operator-manual/project.yaml
// of Argo CD's current release as it ships: every field of it has a place
// (cluster resource names, permitOnlyProjectScopedClusters, a role's
// jwtTokens, sourceIntegrity), and each keeps its value.
func TestLoadsArgoCDsDocumentedProject(t *testing.T) {
	data := argodocs.ForTest(t).MustReadFile(t, "docs/operator-manual/project.yaml")
	ps, err := LoadProjects(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("Argo CD's project.yaml: %v", err)
	}
	s := ps[0].Spec
	if got := s.ClusterResourceBlacklist; len(got) != 1 || got[0] != (ClusterResourceRestrictionItem{Kind: "Namespace", Name: "kube-*"}) {
		t.Errorf("clusterResourceBlacklist = %+v", got)
	}
	if got := s.ClusterResourceWhitelist; len(got) != 1 || got[0] != (ClusterResourceRestrictionItem{Kind: "Namespace"}) {
		t.Errorf("clusterResourceWhitelist = %+v", got)
	}
	if s.PermitOnlyProjectScopedClusters {
		t.Error("permitOnlyProjectScopedClusters is false in the file")
	}
	if got := s.Roles[1].JWTTokens; len(got) != 1 || got[0].IssuedAt != 1535390316 {
		t.Errorf("ci-role's jwtTokens = %+v", got)
	}
	want := &SourceIntegrity{Git: &SourceIntegrityGit{Policies: []SourceIntegrityGitPolicy{{
		Repos: []SourceIntegrityGitPolicyRepo{{URL: "https://github.com/foo/*"}, {URL: "!https://github.com/foo/bar.git"}},
		GPG:   &SourceIntegrityGitPolicyGPG{Mode: SourceIntegrityGitPolicyGPGModeStrict, Keys: []string{"D56C4FCA57A46444"}},
	}}}}
	if !reflect.DeepEqual(s.SourceIntegrity, want) {
		t.Errorf("sourceIntegrity = %+v, want %+v", s.SourceIntegrity, want)
	}
	if ps[0].EffectiveSourceIntegrity() != s.SourceIntegrity {
		t.Error("without signatureKeys the effective criteria are not sourceIntegrity itself")
	}
}

// TestEffectiveSourceIntegrity reads signatureKeys as Argo CD does: one
// head policy for every repository, unless sourceIntegrity has git
// policies, which win.
func TestEffectiveSourceIntegrity(t *testing.T) {
	p := &AppProject{Spec: AppProjectSpec{SignatureKeys: []SignatureKey{{KeyID: "4AEE18F83AFDEB23"}, {KeyID: "07E34825A909B250"}}}}
	got := p.EffectiveSourceIntegrity()
	want := &SourceIntegrity{Git: &SourceIntegrityGit{Policies: []SourceIntegrityGitPolicy{{
		Repos: []SourceIntegrityGitPolicyRepo{{URL: "*"}},
		GPG:   &SourceIntegrityGitPolicyGPG{Mode: SourceIntegrityGitPolicyGPGModeHead, Keys: []string{"4AEE18F83AFDEB23", "07E34825A909B250"}},
	}}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("signatureKeys alone: %+v, want %+v", got, want)
	}
	modern := &SourceIntegrity{Git: &SourceIntegrityGit{Policies: []SourceIntegrityGitPolicy{{
		Repos: []SourceIntegrityGitPolicyRepo{{URL: "https://git.example/*"}},
		GPG:   &SourceIntegrityGitPolicyGPG{Mode: SourceIntegrityGitPolicyGPGModeStrict, Keys: []string{"D56C4FCA57A46444"}},
	}}}}
	p.Spec.SourceIntegrity = modern
	if got := p.EffectiveSourceIntegrity(); got != modern {
		t.Errorf("with git policies: %+v, want sourceIntegrity itself", got)
	}
	if len(p.Spec.SignatureKeys) != 2 || p.Spec.SourceIntegrity != modern {
		t.Error("EffectiveSourceIntegrity modified the project")
	}
}

// TestValidateProjectRestrictionsAndIntegrity: a name glob path.Match
// cannot read, and a sourceIntegrity without git or a policy without gpg
// (which Argo CD's CRD requires), are errors naming the field.
func TestValidateProjectRestrictionsAndIntegrity(t *testing.T) {
	in := `apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: team}
spec:
  clusterResourceWhitelist: [{group: '', kind: Namespace, name: 'team-[a'}]
  clusterResourceBlacklist: [{group: '', kind: Namespace, name: 'kube-*'}]
  sourceIntegrity:
    git:
      policies:
      - repos: [{url: '*'}]
`
	errs := loadErrors(t, func() error { _, err := LoadProjects(strings.NewReader(in)); return err }())
	paths := map[string]bool{}
	for _, e := range errs {
		paths[e.Path] = true
	}
	for _, want := range []string{"spec.clusterResourceWhitelist[0].name", "spec.sourceIntegrity.git.policies[0].gpg"} {
		if !paths[want] {
			t.Errorf("no error at %s: %v", want, errs)
		}
	}
	if len(errs) != 2 {
		t.Errorf("got %d errors, want 2: %v", len(errs), errs)
	}
	noGit := &AppProject{Spec: AppProjectSpec{SourceIntegrity: &SourceIntegrity{}}}
	noGit.Name = "team"
	if err := noGit.Validate(); err == nil || !strings.Contains(err.Error(), "spec.sourceIntegrity.git") {
		t.Errorf("sourceIntegrity without git: %v", err)
	}
}
