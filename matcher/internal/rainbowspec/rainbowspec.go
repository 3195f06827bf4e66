// Package rainbowspec checks that a jobspec loads in rainbow: that it
// satisfies the nextgen v1 JSON schema rainbow validates jobspecs against
// (compspec/jobspec-go, pkg/nextgen/v1/schema.json, as rainbow pins it) and
// decodes into the shape jobspec-go's Go types give it, the way jobspec-go
// reads YAML (converted to JSON, then decoded with encoding/json). The
// checks are written from the schema's and the types' text, for tests.
package rainbowspec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"

	"go.yaml.in/yaml/v3"
)

// Check returns nil when doc loads as a nextgen v1 jobspec, or an error
// naming the first place that does not.
func Check(doc []byte) error {
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		return fmt.Errorf("yaml: %w", err)
	}
	j, err := json.Marshal(jsonable(v))
	if err != nil {
		return fmt.Errorf("to json: %w", err)
	}
	var tree any
	if err := json.Unmarshal(j, &tree); err != nil {
		return err
	}
	if err := checkSchema(tree); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields() // every key written must land in a field
	var js jobspec
	if err := dec.Decode(&js); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	return nil
}

// jsonable turns yaml.v3's map[string]any trees into JSON-marshalable
// values (it already uses string keys for mappings with string keys).
func jsonable(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = jsonable(x)
		}
	case []any:
		for i, x := range v {
			v[i] = jsonable(x)
		}
	}
	return v
}

// The shape of jobspec-go's nextgen v1 types (Jobspec, Resource, Task,
// Group; Requires is a map of strings to strings, Resources a map of
// named resources).
type (
	jobspec struct {
		Version    int                 `json:"version"`
		Name       string              `json:"name"`
		Resources  map[string]resource `json:"resources"`
		Tasks      []task              `json:"tasks"`
		Groups     []group             `json:"groups"`
		Requires   []map[string]string `json:"requires"`
		Attributes map[string]any      `json:"attributes"`
	}
	resource struct {
		Type       string              `json:"type"`
		Unit       string              `json:"unit"`
		Replicas   int32               `json:"replicas"`
		Count      int32               `json:"count"`
		With       []resource          `json:"with"`
		Label      string              `json:"label"`
		Exclusive  bool                `json:"exclusive"`
		Requires   []map[string]string `json:"requires"`
		Attributes map[string]any      `json:"attributes"`
		Schedule   bool                `json:"schedule"`
	}
	task struct {
		Group     string              `json:"group"`
		Name      string              `json:"name"`
		Replicas  int                 `json:"replicas"`
		Resources string              `json:"resources"`
		Command   []string            `json:"command"`
		Requires  []map[string]string `json:"requires"`
	}
	group struct {
		Name      string  `json:"name"`
		Tasks     []task  `json:"tasks"`
		Groups    []group `json:"groups"`
		Resources string  `json:"resources"`
	}
)

// resourceName is the schema's pattern for the keys of "resources".
var resourceName = regexp.MustCompile(`^([a-z]|[|]|&|[0-9]+)+$`)

func checkSchema(v any) error {
	top, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("the document is not an object")
	}
	ver, ok := top["version"]
	if !ok {
		return fmt.Errorf("version is required")
	}
	if f, ok := ver.(float64); !ok || f != 1 {
		return fmt.Errorf("version %v: want the integer 1", ver)
	}
	if n, ok := top["name"]; ok {
		if _, ok := n.(string); !ok {
			return fmt.Errorf("name: want a string")
		}
	}
	if r, ok := top["resources"]; ok {
		m, ok := r.(map[string]any)
		if !ok {
			return fmt.Errorf("resources: want an object")
		}
		for k, res := range m {
			if !resourceName.MatchString(k) {
				continue // patternProperties constrains matching keys only
			}
			if err := checkResource(res, "resources."+k); err != nil {
				return err
			}
		}
	}
	if t, ok := top["tasks"]; ok {
		if err := checkTasks(t, "tasks"); err != nil {
			return err
		}
	}
	if a, ok := top["attributes"]; ok {
		if err := checkAttributes(a, "attributes"); err != nil {
			return err
		}
	}
	return nil
}

func checkResource(v any, path string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: want an object", path)
	}
	t, ok := m["type"]
	if !ok {
		return fmt.Errorf("%s: type is required", path)
	}
	if _, ok := t.(string); !ok {
		return fmt.Errorf("%s.type: want a string", path)
	}
	if c, ok := m["count"]; ok {
		if f, ok := c.(float64); !ok || f != float64(int64(f)) || f < 1 {
			return fmt.Errorf("%s.count %v: want an integer of at least 1", path, c)
		}
	}
	if r, ok := m["requires"]; ok {
		l, ok := r.([]any)
		if !ok {
			return fmt.Errorf("%s.requires: want an array", path)
		}
		for i, e := range l {
			if _, ok := e.(map[string]any); !ok {
				return fmt.Errorf("%s.requires[%d]: want an object", path, i)
			}
		}
	}
	if s, ok := m["schedule"]; ok {
		if _, ok := s.(bool); !ok {
			return fmt.Errorf("%s.schedule: want a boolean", path)
		}
	}
	if a, ok := m["attributes"]; ok {
		if err := checkAttributes(a, path+".attributes"); err != nil {
			return err
		}
	}
	if w, ok := m["with"]; ok {
		l, ok := w.([]any)
		if !ok || len(l) == 0 {
			return fmt.Errorf("%s.with: want a non-empty array", path)
		}
		for i, e := range l {
			if err := checkResource(e, fmt.Sprintf("%s.with[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkTasks(v any, path string) error {
	l, ok := v.([]any)
	if !ok {
		return fmt.Errorf("%s: want an array", path)
	}
	for i, e := range l {
		p := fmt.Sprintf("%s[%d]", path, i)
		m, ok := e.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object", p)
		}
		for _, k := range []string{"resources", "group", "name"} {
			if x, ok := m[k]; ok {
				if _, ok := x.(string); !ok {
					return fmt.Errorf("%s.%s: want a string", p, k)
				}
			}
		}
		if x, ok := m["local"]; ok {
			if _, ok := x.(bool); !ok {
				return fmt.Errorf("%s.local: want a boolean", p)
			}
		}
		if x, ok := m["replicas"]; ok {
			if f, ok := x.(float64); !ok || f < 1 {
				return fmt.Errorf("%s.replicas: want a number of at least 1", p)
			}
		}
		if c, ok := m["command"]; ok {
			switch c := c.(type) {
			case string:
			case []any:
				if len(c) == 0 {
					return fmt.Errorf("%s.command: want at least one item", p)
				}
				for _, s := range c {
					if _, ok := s.(string); !ok {
						return fmt.Errorf("%s.command: want strings", p)
					}
				}
			default:
				return fmt.Errorf("%s.command: want a string or an array", p)
			}
		}
	}
	return nil
}

func checkAttributes(v any, path string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: want an object", path)
	}
	if d, ok := m["duration"]; ok {
		if f, ok := d.(float64); !ok || f < 0 {
			return fmt.Errorf("%s.duration: want a number of at least 0", path)
		}
	}
	if c, ok := m["cwd"]; ok {
		if _, ok := c.(string); !ok {
			return fmt.Errorf("%s.cwd: want a string", path)
		}
	}
	if e, ok := m["environment"]; ok {
		if _, ok := e.(map[string]any); !ok {
			return fmt.Errorf("%s.environment: want an object", path)
		}
	}
	return nil
}
