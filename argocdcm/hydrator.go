package argocdcm

// HydratorSettings are the argocd-cm keys of Argo CD's source hydrator,
// which the engine does not use and a host running package hydrator
// passes to its options. Empty fields were not set (the hydrator's
// defaults apply).
type HydratorSettings struct {
	// CommitMessageTemplate is sourceHydrator.commitMessageTemplate.
	CommitMessageTemplate string
	// ReadmeMessageTemplate is sourceHydrator.readmeMessageTemplate.
	ReadmeMessageTemplate string
	// AuthorName and AuthorEmail are commit.author.name and
	// commit.author.email, the author of hydrated commits.
	AuthorName, AuthorEmail string
}

// hydratorKeys are the argocd-cm keys HydratorSettings holds.
var hydratorKeys = map[string]bool{
	"sourceHydrator.commitMessageTemplate": true,
	"sourceHydrator.readmeMessageTemplate": true,
	"commit.author.name":                   true,
	"commit.author.email":                  true,
}

// set reads one of hydratorKeys.
func (h *HydratorSettings) set(key, value string) {
	switch key {
	case "sourceHydrator.commitMessageTemplate":
		h.CommitMessageTemplate = value
	case "sourceHydrator.readmeMessageTemplate":
		h.ReadmeMessageTemplate = value
	case "commit.author.name":
		h.AuthorName = value
	case "commit.author.email":
		h.AuthorEmail = value
	}
}
