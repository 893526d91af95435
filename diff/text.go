package diff

import (
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

const (
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
	ansiCyan  = "\x1b[36m"
	ansiReset = "\x1b[0m"
)

// unifiedText writes a unified diff of live against predicted, both as YAML
// with sorted keys; a nil side is empty.
func unifiedText(name string, live, predicted map[string]any, color bool, context int) (string, error) {
	a, err := yamlLines(live)
	if err != nil {
		return "", fmt.Errorf("live as YAML: %w", err)
	}
	b, err := yamlLines(predicted)
	if err != nil {
		return "", fmt.Errorf("predicted as YAML: %w", err)
	}
	text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: a, B: b, FromFile: "live/" + name, ToFile: "predicted/" + name, Context: context,
	})
	if err != nil {
		return "", err
	}
	if !color {
		return text, nil
	}
	return colorize(text), nil
}

func yamlLines(obj map[string]any) ([]string, error) {
	if obj == nil {
		return nil, nil
	}
	var b strings.Builder
	writeYAML(&b, obj)
	return difflib.SplitLines(b.String()), nil
}

func colorize(text string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		if line == "" {
			continue
		}
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			b.WriteString(line)
		case strings.HasPrefix(line, "+"):
			b.WriteString(ansiGreen + strings.TrimSuffix(line, "\n") + ansiReset + "\n")
		case strings.HasPrefix(line, "-"):
			b.WriteString(ansiRed + strings.TrimSuffix(line, "\n") + ansiReset + "\n")
		case strings.HasPrefix(line, "@@"):
			b.WriteString(ansiCyan + strings.TrimSuffix(line, "\n") + ansiReset + "\n")
		default:
			b.WriteString(line)
		}
	}
	return b.String()
}

// UnifiedYAML returns a unified diff (3 lines of context) of from against
// to, both written as YAML with sorted keys, the way Result.Text is; a nil
// side is empty. The labels name the two sides in the header. It masks
// nothing: callers mask Secrets first.
func UnifiedYAML(fromLabel, toLabel string, from, to map[string]any) (string, error) {
	a, err := yamlLines(from)
	if err != nil {
		return "", err
	}
	b, err := yamlLines(to)
	if err != nil {
		return "", err
	}
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: a, B: b, FromFile: fromLabel, ToFile: toLabel, Context: 3})
}
