package inspect

import (
	"bytes"
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Presets are schemas shipped with the binary as YAML: the same format a
// config file's `schemas:` section uses, so a preset is data, not a code path.
//
//go:embed presets/*.yaml
var presetFS embed.FS

var presets = mustLoadPresets()

func mustLoadPresets() map[string]*Schema {
	out := map[string]*Schema{}
	entries, err := presetFS.ReadDir("presets")
	if err != nil {
		panic(err) // embedded at build time: cannot fail at run time
	}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), path.Ext(e.Name()))
		data, err := presetFS.ReadFile("presets/" + e.Name())
		if err != nil {
			panic(err)
		}
		s, err := ParseSchemaYAML(name, data)
		if err != nil {
			panic(fmt.Sprintf("built-in preset %s: %v", name, err))
		}
		out[name] = s
	}
	return out
}

// ParseSchemaYAML decodes and compiles one schema document; unknown keys are
// errors that name the line.
func ParseSchemaYAML(name string, data []byte) (*Schema, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	s := &Schema{}
	if err := dec.Decode(s); err != nil {
		return nil, fmt.Errorf("%s: %v", name, cleanYAMLError(err))
	}
	s.Name = name
	if err := s.Compile(); err != nil {
		return nil, err
	}
	return s, nil
}

// cleanYAMLError drops yaml.v3's "yaml: unmarshal errors:" preamble so the
// message stays on one line.
func cleanYAMLError(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "yaml: unmarshal errors:\n")
	msg = strings.TrimPrefix(msg, "yaml: ")
	lines := strings.Split(msg, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, "; ")
}

// CleanYAMLError is cleanYAMLError for other packages decoding config.
func CleanYAMLError(err error) string { return cleanYAMLError(err) }

// Preset returns a copy of a built-in schema.
func Preset(name string) (*Schema, error) {
	s, ok := presets[name]
	if !ok {
		return nil, fmt.Errorf("unknown preset %q (known: %s)", name, strings.Join(PresetNames(), ", "))
	}
	c := *s
	return &c, nil
}

// PresetNames lists the built-in presets, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
