package apicheck

import (
	"bufio"
	"regexp"
	"strings"
)

// Change is one incompatible change apidiff reports for a public package.
type Change struct {
	// Name is the package-qualified name of what changed, as CHANGELOG.md
	// lists it: the module-relative package path ("gitops" for the root),
	// a dot and the name ("engine.Options.Workers", "engine.Engine.Sync");
	// for a removed package, its import path.
	Name string
	// Message is apidiff's line for the change, as it printed it.
	Message string
}

// ParseReport reads the lines apidiff -m -incompatible printed for module
// modPath ("- subject: what changed") and returns one Change per line of a
// public package: internal/ and examples/ packages are left out.
func ParseReport(out, modPath string) []Change {
	var changes []Change
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "- ")
		if !ok {
			continue
		}
		name, rel := changeName(line, modPath)
		if !public(rel) {
			continue
		}
		changes = append(changes, Change{Name: name, Message: line})
	}
	return changes
}

// changeName returns the package-qualified name of the change apidiff
// describes in line, and the module-relative path of its package ("" for
// the root; the full path for a package outside the module).
func changeName(line, modPath string) (name, rel string) {
	subject, _, _ := strings.Cut(line, ": ")
	if pkg, ok := strings.CutPrefix(subject, "package "); ok {
		rel = strings.TrimPrefix(strings.TrimPrefix(pkg, modPath), "/")
		return pkg, rel
	}
	obj := subject
	switch {
	case strings.HasPrefix(subject, "./"):
		// A package below the root: "./engine.Options.Workers". Package
		// folders hold no dot, so the first dot ends the path.
		var ok bool
		rel, obj, ok = strings.Cut(strings.TrimPrefix(subject, "./"), ".")
		if !ok {
			return subject, rel
		}
	case strings.HasPrefix(subject, modPath+"."):
		obj = strings.TrimPrefix(subject, modPath+".")
	case strings.Contains(typeArgs.ReplaceAllString(subject, ""), "/"):
		// A type of another module, reported through a definition of ours.
		return subject, subject
	}
	pkgName := rel
	if rel == "" {
		pkgName = modPath[strings.LastIndex(modPath, "/")+1:]
	}
	return pkgName + "." + receiverless(obj), rel
}

var typeArgs = regexp.MustCompile(`\[[^\]]*\]`)

// receiverless writes apidiff's method names ("(*Engine).Sync",
// "List[T].Len") as a host names them ("Engine.Sync", "List.Len").
func receiverless(obj string) string {
	obj = typeArgs.ReplaceAllString(obj, "")
	return strings.NewReplacer("(*", "", ")", "", "*", "").Replace(obj)
}

// public reports whether the package at the module-relative path rel is
// part of the API: not internal, not one of the example programs.
func public(rel string) bool {
	for _, elem := range strings.Split(rel, "/") {
		if elem == "internal" {
			return false
		}
	}
	return rel != "examples" && !strings.HasPrefix(rel, "examples/")
}

// Listed returns the names CHANGELOG.md's "## Unreleased" section lists:
// each span in backticks, up to its first character that cannot be part
// of a name (so `engine.Engine.Sync(ctx, req)` lists engine.Engine.Sync).
func Listed(changelog string) map[string]bool {
	listed := map[string]bool{}
	in := false
	for _, line := range strings.Split(changelog, "\n") {
		if strings.HasPrefix(line, "## ") {
			in = strings.EqualFold(strings.TrimSpace(strings.TrimPrefix(line, "## ")), "Unreleased")
			continue
		}
		if !in {
			continue
		}
		for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
			if name := nameToken.FindString(m[1]); name != "" {
				listed[strings.TrimRight(name, ".")] = true
			}
		}
	}
	return listed
}

var (
	codeSpan  = regexp.MustCompile("`([^`]+)`")
	nameToken = regexp.MustCompile(`^[A-Za-z0-9_./-]+`)
)

// Accepted reports whether listed names c: its own name, or (for a name
// inside a package) the name of what holds it, a type for its fields and
// methods. A package's bare path never covers its members.
func (c Change) Accepted(listed map[string]bool) bool {
	if listed[c.Name] {
		return true
	}
	slash := strings.LastIndex(c.Name, "/")
	dot := strings.Index(c.Name[slash+1:], ".")
	if dot < 0 {
		return false
	}
	pkgEnd := slash + 1 + dot
	for name := c.Name; ; {
		i := strings.LastIndex(name, ".")
		if i <= pkgEnd {
			return false
		}
		name = name[:i]
		if listed[name] {
			return true
		}
	}
}
