package integrity

import (
	"fmt"
	"strings"

	"github.com/kubegitops/gitops/source"
)

// maxProblems bounds the problems one source reports, as Argo CD does, so
// that a long unsigned history does not flood a condition.
const maxProblems = 10

// Result is the outcome of a verification: the checks made, each with its
// problems (Argo CD's SourceIntegrityCheckResult).
type Result struct {
	// Checks are the checks made.
	Checks []Check
}

// Check is one check made and what it found wrong.
type Check struct {
	// Name names the check (CheckGitGPG).
	Name string
	// Problems say what failed, for people; none when the check passed.
	Problems []string
}

// Error is a verification's failure: its message is Argo CD's
// ComparisonError message, one line per problem, "<check>: <problem>".
type Error struct {
	// Result is the failed verification.
	Result *Result
}

// Error implements error.
func (e *Error) Error() string {
	var lines []string
	for _, c := range e.Result.Checks {
		for _, p := range c.Problems {
			lines = append(lines, c.Name+": "+p)
		}
	}
	return strings.Join(lines, "\n")
}

// Err returns an *Error when a check found a problem, else nil (also for a
// nil Result).
func (r *Result) Err() error {
	if r == nil {
		return nil
	}
	for _, c := range r.Checks {
		if len(c.Problems) > 0 {
			return &Error{Result: r}
		}
	}
	return nil
}

// describeProblems are the problems of a listing under a policy trusting
// keys: each signature that is not good, or is made by a key keys does
// not list, in Argo CD's words; one per key (but for unsigned commits and
// tags, each reported), at most maxProblems.
func describeProblems(keys []string, ring *KeyRing, sigs []source.Signature) []string {
	reported := map[string]bool{}
	var out []string
	for _, s := range sigs {
		p := problem(keys, ring, s)
		if p == "" {
			continue
		}
		if s.KeyID != "" && !s.Tag {
			if reported[s.KeyID] {
				continue
			}
			reported[s.KeyID] = true
		}
		out = append(out, p)
		if len(out) >= maxProblems {
			break
		}
	}
	return out
}

// problem is what is wrong with one signature, or "".
func problem(keys []string, ring *KeyRing, s source.Signature) string {
	if s.Result != source.SignatureGood {
		return fmt.Sprintf("Failed verifying revision %s by '%s': %s (key_id=%s)", s.Revision, identity(s), s.Result, s.KeyID)
	}
	if keyAllowed(keys, s.KeyID) {
		return ""
	}
	// gpg signs with a signing subkey when the key has one; policies
	// list the primary key.
	if primary, ok := ring.PrimaryKeyID(s.KeyID); ok && primary != s.KeyID && keyAllowed(keys, primary) {
		return ""
	}
	return fmt.Sprintf("Failed verifying revision %s by '%s': signed with unallowed key (key_id=%s)", s.Revision, identity(s), s.KeyID)
}

// identity names who made a signed object as Argo CD's problems do: the
// commit's "Name <email>", the tag's `Name "<email>"` (git's
// %(taggername) "%(taggeremail)").
func identity(s source.Signature) string {
	if s.Tag {
		return fmt.Sprintf("%s \"<%s>\"", s.Name, s.Email)
	}
	return fmt.Sprintf("%s <%s>", s.Name, s.Email)
}

// keyAllowed reports whether keys (16 hexadecimal digits or fingerprints;
// others never match) hold keyID, letter case aside.
func keyAllowed(keys []string, keyID string) bool {
	for _, k := range keys {
		if id, ok := NormalizeKeyID(k); ok && strings.EqualFold(id, keyID) {
			return true
		}
	}
	return false
}
