package preview

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"
)

// DefaultMarkdownLimit keeps a comment under GitHub's 65,536 characters.
const DefaultMarkdownLimit = 60_000

// WriteJSON writes the report as indented JSON.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Markdown returns the report as a pull-request comment: a summary line,
// a table of the affected apps, and a collapsed <details> section per app
// with its object diffs. The text is at most limit bytes (<= 0:
// DefaultMarkdownLimit); what does not fit is left out, whole rows and
// sections first, and a closing note says how much was cut.
func (r Report) Markdown(limit int) string {
	if limit <= 0 {
		limit = DefaultMarkdownLimit
	}
	const reserve = 200 // room for the cut note
	var b strings.Builder
	fmt.Fprintf(&b, "### Preview of %s → %s\n\n", short(r.Base), short(r.Head))
	fmt.Fprintf(&b, "%s, %d unchanged · %d changed files · renders: %d base, %d head\n\n",
		plural(len(r.Apps), "app affected", "apps affected"), r.Unchanged, len(r.ChangedPaths), r.Renders.Base, r.Renders.Head)
	if len(r.Apps) == 0 {
		b.WriteString("No app changes.\n")
		return b.String()
	}
	b.WriteString("| App | Status | Added | Changed | Removed | Why |\n|---|---|---|---|---|---|\n")
	rows, sections := 0, 0
	for _, a := range r.Apps {
		row := tableRow(a)
		if b.Len()+len(row) > limit-reserve {
			break
		}
		b.WriteString(row)
		rows++
	}
	b.WriteString("\n")
	if rows == len(r.Apps) {
		for _, a := range r.Apps {
			sec := section(a)
			if b.Len()+len(sec) > limit-reserve {
				break
			}
			b.WriteString(sec)
			sections++
		}
	}
	if rows < len(r.Apps) || sections < len(r.Apps) {
		fmt.Fprintf(&b, "> Output cut to %d bytes: %d of %d apps in the table, %d with details. The JSON output (`--format json`) has everything.\n",
			limit, rows, len(r.Apps), sections)
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func counts(objs []ObjectChange) (added, changed, removed int) {
	for _, o := range objs {
		switch o.Change {
		case Added:
			added++
		case Changed:
			changed++
		case Removed:
			removed++
		}
	}
	return
}

func tableRow(a AppReport) string {
	ad, ch, rm := counts(a.Objects)
	why := a.Reason
	if a.Status == AppRemoved {
		why = "no longer defined"
	}
	return fmt.Sprintf("| `%s` | %s | %d | %d | %d | %s |\n", a.Name, statusText(a), ad, ch, rm, cell(why))
}

func statusText(a AppReport) string {
	if a.Status == AppFailed {
		return "**failed**"
	}
	return string(a.Status)
}

// cell makes text safe inside a table cell.
func cell(s string) string {
	s = strings.ReplaceAll(oneLine(s), "|", `\|`)
	return strings.ReplaceAll(s, "`", "'")
}

func section(a AppReport) string {
	var b strings.Builder
	ad, ch, rm := counts(a.Objects)
	fmt.Fprintf(&b, "<details><summary><code>%s</code> %s: %d added, %d changed, %d removed (%s)</summary>\n\n",
		html.EscapeString(a.Name), a.Status, ad, ch, rm, html.EscapeString(a.Origin))
	if a.Error != "" {
		fmt.Fprintf(&b, "Render failed:\n\n%s\n", fenced("", a.Error+"\n"))
	}
	for _, p := range a.Policy {
		fmt.Fprintf(&b, "- Policy: %s\n", cell(p))
	}
	for _, n := range a.Notes {
		fmt.Fprintf(&b, "- Note: %s\n", cell(n))
	}
	if len(a.Policy)+len(a.Notes) > 0 {
		b.WriteString("\n")
	}
	for _, o := range a.Objects {
		fmt.Fprintf(&b, "**%s** %s\n\n%s\n", o.Change, o.Key, fenced("diff", o.Diff))
	}
	if l := a.Live; l != nil {
		fmt.Fprintf(&b, "Live cluster (%s):\n\n", l.Sync)
		if l.Error != "" {
			fmt.Fprintf(&b, "%s\n", fenced("", l.Error+"\n"))
		}
		for _, o := range l.Objects {
			if o.Kept {
				fmt.Fprintf(&b, "- sync would leave %s (requires prune): %s\n", o.Key, strings.TrimSpace(o.Diff))
				continue
			}
			verb := map[Change]string{Added: "create", Changed: "update", Removed: "prune"}[o.Change]
			fmt.Fprintf(&b, "- sync would %s %s\n", verb, o.Key)
			if o.Diff != "" {
				fmt.Fprintf(&b, "\n%s\n", fenced("diff", o.Diff))
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("</details>\n\n")
	return b.String()
}

// fenced puts text in a code fence longer than any run of backticks in it.
func fenced(lang, text string) string {
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return fence + lang + "\n" + text + fence + "\n"
}
