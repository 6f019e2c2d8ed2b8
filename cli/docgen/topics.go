package docgen

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

// TopicText is the body of 'idemctl help TOPIC'; ok is false for an
// unknown topic.
func (b Book) TopicText(name string) (text string, ok bool) {
	g := GroupedFlags(b.Shared)
	switch name {
	case "connection":
		return "Connection flags, taken by every command that talks to Redis. Each can also be\n" +
			"set as an environment variable (shown on the right); a flag on the command line wins,\n" +
			"and either wins over the config file's profile.\n\n" + FlagTable(g[GroupConnection], true) +
			"\nThe config file is --config, else $IDEMCTL_CONFIG, else\n" +
			"$XDG_CONFIG_HOME/idemctl/config.yaml (~/.config/idemctl/config.yaml); 'idemctl config path'\n" +
			"says which one is in effect, 'idemctl config view' what it resolves to.\n", true
	case "scanning":
		return "Scan flags, taken by scan, stats, check, exporter and ui. A scan is SCAN with\n" +
			"COUNT plus pipelined reads of each key; these bound what it costs the server. A\n" +
			"profile's scan: section sets them too; a flag wins.\n\n" + FlagTable(g[GroupScan], false), true
	case "environment":
		var vars []*pflag.Flag
		vars = append(vars, g[GroupConnection]...)
		vars = append(vars, g[GroupKeyspace]...)
		text = "Every connection, profile and keyspace flag can be set from the environment as\n" +
			"IDEMCTL_ and the flag's name in capitals, - as _. A flag on the command line wins over\n" +
			"the variable; the variable wins over the config file's profile.\n\n"
		for _, f := range vars {
			text += fmt.Sprintf("  %-34s --%s\n", EnvName(f.Name), f.Name)
		}
		text += "\nAlso read:\n" +
			"  XDG_CONFIG_HOME, HOME               where the default config file is\n" +
			"  XDG_STATE_HOME, HOME                where the default audit log is\n" +
			"  NO_COLOR                            the terminal UI without colours\n" +
			"  the variables --password-env and --sentinel-password-env name\n"
		return text, true
	}
	return "", false
}

// WriteTopic writes topic name; false for an unknown topic.
func (b Book) WriteTopic(w io.Writer, name string) bool {
	text, ok := b.TopicText(name)
	if ok {
		fmt.Fprint(w, text)
	}
	return ok
}
