package argocdcm

import (
	"fmt"
	"slices"
	"strings"
)

// Component is one of Argo CD's programs, whose settings the two
// ConfigMaps carry.
type Component string

// Argo CD's components. This module's operator (examples/operator) plays
// the first four (Played); the others' settings are named as theirs.
const (
	ApplicationController    Component = "application controller"
	RepoServer               Component = "repo server"
	ApplicationSetController Component = "ApplicationSet controller"
	NotificationsController  Component = "notifications controller"
	APIServer                Component = "API server"
	WebUI                    Component = "web UI"
	Dex                      Component = "Dex"
	CommitServer             Component = "commit server"
)

// Played are the components whose work this module's operator does.
var Played = []Component{ApplicationController, RepoServer, ApplicationSetController, NotificationsController}

// Use says what this module does with a settings key.
type Use string

// The uses of a key.
const (
	// UseApplied: the key sets what Key.Effect names, as Argo CD defines
	// it.
	UseApplied Use = "applied"
	// UseMeaningless: the key configures a part of a component this module
	// plays that this module does not have (a gRPC connection to a repo
	// server, the repo server's own TLS, a Redis cache, a profiling
	// endpoint of its own); Key.Effect says why it has nothing to set.
	UseMeaningless Use = "meaningless here"
	// UseNotImplemented: behaviour of a component this module plays that
	// it does not have; Key.Effect says what it does instead. A value other
	// than Key.Same is refused by name (ErrUnsupported), the rest of the
	// ConfigMap applying.
	UseNotImplemented Use = "not implemented"
	// UseOtherComponent: a setting of a component this module does not
	// play (the API server, the web UI, Dex, the commit server).
	UseOtherComponent Use = "another component's"
)

// Key describes one key of argocd-cm or argocd-cmd-params-cm: which
// component reads it in Argo CD, and what this module does with it. The
// tables (ParamKeys, SettingKeys) are the one home of these answers; the
// parsers, the operator's Events and its README are made from them.
type Key struct {
	// Name is the key; a name ending in "." or "*" is a prefix naming a
	// family of keys ("help.download.", "resource.customizations.health.").
	Name string
	// Components read the key in Argo CD.
	Components []Component
	// Use says what this module does with it.
	Use Use
	// Effect says, for UseApplied, what the key sets here; otherwise why
	// it sets nothing, or what this module does instead.
	Effect string
	// Live reports that a change applies to a running operator. Argo CD's
	// components read argocd-cmd-params-cm when they start, and so does
	// the operator, but for the keys marked Live.
	Live bool
	// Same, for UseNotImplemented, is the value that asks for what this
	// module does; "" accepts any value (the key only changes what another
	// key turns on).
	Same string
}

// matches reports whether the key (or family) k covers name.
func (k Key) matches(name string) bool {
	if strings.HasSuffix(k.Name, ".") || strings.HasSuffix(k.Name, "*") {
		return strings.HasPrefix(name, strings.TrimSuffix(k.Name, "*"))
	}
	return k.Name == name
}

// Ignored reports whether the key sets nothing here: meaningless here, or
// another component's.
func (k Key) Ignored() bool { return k.Use == UseMeaningless || k.Use == UseOtherComponent }

// Note is the line that names a key set in a ConfigMap: the key and what
// this module does with it.
func (k Key) Note(configMap, name string) string {
	switch k.Use {
	case UseOtherComponent:
		return fmt.Sprintf("%s %s: a setting of Argo CD's %s, not used by this program", configMap, name, componentList(k.Components))
	case UseApplied:
		return fmt.Sprintf("%s %s: %s", configMap, name, k.Effect)
	}
	return fmt.Sprintf("%s %s: %s: %s", configMap, name, k.Use, k.Effect)
}

func componentList(cs []Component) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}

// lookup finds the table's entry for name: the exact key first, then the
// longest family prefix.
func lookup(table []Key, name string) (Key, bool) {
	best := -1
	for i, k := range table {
		if k.Name == name {
			return k, true
		}
		if k.matches(name) && (best < 0 || len(k.Name) > len(table[best].Name)) {
			best = i
		}
	}
	if best < 0 {
		return Key{}, false
	}
	return table[best], true
}

// Ignored is a key of a ConfigMap that sets nothing here, with what the
// table says of it.
type Ignored struct {
	// Key is the key as the ConfigMap names it.
	Key string
	// Entry is its table entry.
	Entry Key
}

// Group is ignored keys that set nothing here for one reason.
type Group struct {
	// Why says why they set nothing: whose they are, or what this
	// module does instead.
	Why string
	// Keys are the keys, sorted.
	Keys []string
}

// Groups groups ignored keys by what the table says of them, sorted by
// Why.
func Groups(ignored []Ignored) []Group {
	byWhy := map[string][]string{}
	for _, ig := range ignored {
		why := ig.Entry.Effect
		if ig.Entry.Use == UseOtherComponent {
			why = "settings of Argo CD's " + componentList(ig.Entry.Components) + ", not used by this program"
		}
		byWhy[why] = append(byWhy[why], ig.Key)
	}
	out := make([]Group, 0, len(byWhy))
	for why, keys := range byWhy {
		slices.Sort(keys)
		out = append(out, Group{Why: why, Keys: keys})
	}
	slices.SortFunc(out, func(a, b Group) int { return strings.Compare(a.Why, b.Why) })
	return out
}

// Summaries are Groups as lines, one per group naming every key:
// "<configMap>: <why>: k1, k2, ...".
func Summaries(configMap string, ignored []Ignored) []string {
	var out []string
	for _, g := range Groups(ignored) {
		out = append(out, fmt.Sprintf("%s: %s: %s", configMap, g.Why, strings.Join(g.Keys, ", ")))
	}
	return out
}
