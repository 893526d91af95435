package argocdcm

import (
	"strings"
	"testing"
)

// The source hydrator's keys are read, not reported as unused: argocd-cm's
// templates and author, argocd-cmd-params-cm's hydrator.enabled; a
// malformed hydrator.enabled is refused by name.
func TestHydratorKeys(t *testing.T) {
	s, err := ParsePartial(map[string]string{
		"sourceHydrator.commitMessageTemplate": "{{ .metadata.drySha }}",
		"sourceHydrator.readmeMessageTemplate": "# hydrated",
		"commit.author.name":                   "Bot",
		"commit.author.email":                  "bot@example.com",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := HydratorSettings{CommitMessageTemplate: "{{ .metadata.drySha }}", ReadmeMessageTemplate: "# hydrated", AuthorName: "Bot", AuthorEmail: "bot@example.com"}
	if s.Hydrator != want || len(s.Warnings) != 0 {
		t.Errorf("hydrator settings %+v, warnings %v", s.Hydrator, s.Warnings)
	}
	p, err := ParseParams(map[string]string{"hydrator.enabled": "true"})
	if err != nil || !p.HydratorEnabled || len(p.Warnings) != 0 {
		t.Errorf("hydrator.enabled: %+v, %v", p, err)
	}
	p, err = ParseParams(map[string]string{"hydrator.enabled": "yes please"})
	if err == nil || p.HydratorEnabled || !strings.Contains(err.Error(), "hydrator.enabled") {
		t.Errorf("malformed hydrator.enabled: %+v, %v", p, err)
	}
}
