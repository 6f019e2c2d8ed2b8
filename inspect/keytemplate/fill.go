package keytemplate

import (
	"fmt"
	"strings"
)

// Fill builds the key the template reads back into these captures. Every
// capture must be given; a {name} capture may not hold the delimiter.
// missing lists the captures not given (then the key is "").
func (t *Template) Fill(values map[string]string) (key string, missing []string, err error) {
	if t.Empty() {
		return "", nil, fmt.Errorf("no key template")
	}
	var b strings.Builder
	for _, p := range t.parts {
		if p.capture < 0 {
			b.WriteString(p.lit)
			continue
		}
		name := t.names[p.capture]
		v, ok := values[name]
		if !ok || v == "" {
			missing = append(missing, name)
			continue
		}
		if !p.span && strings.IndexByte(v, t.delim) >= 0 {
			return "", nil, fmt.Errorf("capture %s is one segment of %s: %q holds %q", name, t.src, v, string(t.delim))
		}
		b.WriteString(v)
	}
	if missing != nil {
		return "", missing, nil
	}
	key = b.String()
	groups, ok := t.Match(key)
	if !ok {
		return "", nil, fmt.Errorf("key %q does not fit %s", key, t.src)
	}
	for i, name := range t.names {
		if groups[i] != values[name] {
			return "", nil, fmt.Errorf("key %q reads back capture %s as %q, not %q", key, name, groups[i], values[name])
		}
	}
	return key, nil, nil
}
