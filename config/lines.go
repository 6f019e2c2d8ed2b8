package config

import (
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/idemctl/idemctl/internal/yamldoc"
)

// lineIndex maps "section/name" to the line where that entry starts, and
// "section/" to the line of the section's key (see yamldoc.Index).
type lineIndex yamldoc.Lines

func indexLines(root *yaml.Node) lineIndex { return lineIndex(yamldoc.Index(root)) }

func (l lineIndex) at(section, name string) int { return l[section+"/"+name] }

// path is the line of the entry at the path made of parts ("profiles",
// "prod", "scan", "count"), or def when the file does not write it.
func (l lineIndex) path(def int, parts ...string) int {
	if n, ok := l[strings.Join(parts, "/")]; ok {
		return n
	}
	return def
}

// blame is the line of the setting msg is about, within the entry at base
// ("keyspaces/0", "schemas/legacy"): the setting under base that msg names
// first (as written, key_template, or in words, "key template"), then,
// while the words right after it name one of its own entries
// ("verify: command argument 1", "state.field", "actions.fail.mode"), that
// entry. def (the entry's own line) when msg names nothing the file
// writes under base. So an error names the line at fault, not the line
// where its keyspace, profile or schema starts.
func (l lineIndex) blame(def int, base, msg string) int {
	key, rest := l.firstMention(base, msg)
	if key == "" {
		return def
	}
	path := base + "/" + key
	for {
		m := nextEntry.FindStringSubmatch(rest)
		if m == nil {
			break
		}
		name := m[1] + m[2]
		if _, ok := l[path+"/"+name]; !ok {
			break
		}
		path += "/" + name
		rest = rest[len(m[0]):]
	}
	return l[path]
}

// nextEntry matches what names an entry inside the setting just named:
// ".field", ": command", " argument 2" (a list's item) or "[2]".
var nextEntry = regexp.MustCompile(`^(?:\.|: | )?(?:(?:argument |\[)(\d+)\]?|([A-Za-z_][A-Za-z0-9_-]*))`)

// firstMention finds the setting under base that msg names first, as a
// whole word, and what msg says after it.
func (l lineIndex) firstMention(base, msg string) (key, rest string) {
	best := -1
	for path := range l {
		name, ok := strings.CutPrefix(path, base+"/")
		if !ok || name == "" || strings.Contains(name, "/") {
			continue
		}
		for _, spelled := range []string{name, strings.ReplaceAll(name, "_", " ")} {
			at := wordIndex(msg, spelled)
			if at >= 0 && (best < 0 || at < best || at == best && len(name) > len(key)) {
				best, key, rest = at, name, msg[at+len(spelled):]
			}
		}
	}
	return key, rest
}

// wordIndex is where word first appears in s as a whole word, or -1.
func wordIndex(s, word string) int {
	for from := 0; ; {
		i := strings.Index(s[from:], word)
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(word)
		if (i == 0 || !wordByte(s[i-1])) && (end == len(s) || !wordByte(s[end])) {
			return i
		}
		from = i + 1
	}
}

func wordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}
