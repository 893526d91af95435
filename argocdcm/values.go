package argocdcm

import (
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// strictYAML decodes a YAML value into into, refusing unknown fields.
func strictYAML(value string, into any) error {
	if err := yaml.UnmarshalStrict([]byte(value), into); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return nil
}

// parseBool reads "true", "false" or empty (false).
func parseBool(value string) (bool, error) {
	switch strings.TrimSpace(value) {
	case "true":
		return true, nil
	case "false", "":
		return false, nil
	}
	return false, fmt.Errorf("%w: %q, want true or false", ErrMalformed, value)
}

// parseDuration reads a Go duration ("180s", "3m") or whole seconds.
func parseDuration(value string) (time.Duration, error) {
	v := strings.TrimSpace(value)
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return d, nil
	}
	var secs int64
	if _, err := fmt.Sscanf(v, "%d", &secs); err == nil && fmt.Sprint(secs) == v && secs >= 0 {
		return time.Duration(secs) * time.Second, nil
	}
	return 0, fmt.Errorf("%w: %q, want a duration such as 180s", ErrMalformed, value)
}
