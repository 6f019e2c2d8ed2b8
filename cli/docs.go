package cli

import (
	"embed"
	"strings"
)

// commandDocs holds each command's usage line, summary and description.
//
//go:embed docs/*.txt
var commandDocs embed.FS

// commandDoc reads docs/NAME.txt: the usage line, the one-line summary,
// then (after a blank line) the description. A command without its file
// is a build mistake TestEveryCommandIsDocumented catches; it still runs.
func commandDoc(name string) (use, short, long string) {
	b, err := commandDocs.ReadFile("docs/" + name + ".txt")
	if err != nil {
		return name, "", ""
	}
	use, rest, _ := strings.Cut(string(b), "\n")
	short, long, _ = strings.Cut(rest, "\n")
	return use, strings.TrimSpace(short), strings.TrimSpace(long)
}
