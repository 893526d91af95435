package appset

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"
)

// list yields the elements, then the elementsYaml list. Under fasttemplate
// every value must be a string, except values, a map of strings that
// becomes values.<key>; under goTemplate elements are taken as they are.
func (c *genCtx) list(l *ListGenerator) ([]Params, error) {
	var out []Params
	add := func(i int, el map[string]any) error {
		if c.tmpl.goTemplate {
			out = append(out, el)
			return nil
		}
		p := Params{}
		for k, v := range el {
			if k == "values" {
				vm, ok := v.(map[string]any)
				if !ok {
					return fmt.Errorf("elements[%d].values: want a map of strings", i)
				}
				for vk, vv := range vm {
					s, ok := vv.(string)
					if !ok {
						return fmt.Errorf("elements[%d].values.%s: want a string (use goTemplate for other values)", i, vk)
					}
					p["values."+vk] = s
				}
				continue
			}
			s, ok := v.(string)
			if !ok {
				return fmt.Errorf("elements[%d].%s: want a string (use goTemplate for other values)", i, k)
			}
			p[k] = s
		}
		out = append(out, p)
		return nil
	}
	for i, raw := range l.Elements {
		var el map[string]any
		if err := json.Unmarshal(raw, &el); err != nil {
			return nil, fmt.Errorf("elements[%d]: want an object: %w", i, err)
		}
		if err := add(i, el); err != nil {
			return nil, err
		}
	}
	if l.ElementsYaml != "" {
		var els []map[string]any
		if err := yaml.Unmarshal([]byte(l.ElementsYaml), &els); err != nil {
			return nil, fmt.Errorf("elementsYaml: want a list of objects: %w", err)
		}
		for i, el := range els {
			if err := add(len(l.Elements)+i, el); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// yamlToMap decodes a YAML or JSON object.
func yamlToMap(s string, out *map[string]any) error {
	return yaml.Unmarshal([]byte(s), out)
}
