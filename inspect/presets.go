package inspect

import (
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/idemctl/idemctl/internal/yamldoc"
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

// ParseSchemaYAML decodes and compiles one schema document; errors name the
// line, the key and what it accepts, as a config file's do.
func ParseSchemaYAML(name string, data []byte) (*Schema, error) {
	s := &Schema{}
	if _, err := yamldoc.Decode(data, s); err != nil {
		return nil, fmt.Errorf("schema %s: %v", name, err)
	}
	s.Name = name
	if err := s.Compile(); err != nil {
		return nil, err
	}
	return s, nil
}

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
