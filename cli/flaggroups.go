package cli

import (
	"slices"

	"github.com/spf13/pflag"

	"github.com/idemctl/idemctl/cli/docgen"
)

// registerGroup registers flags through register and files them under group.
func registerGroup(fs *pflag.FlagSet, group string, register func(*pflag.FlagSet)) {
	g := pflag.NewFlagSet(group, pflag.ContinueOnError)
	g.SortFlags = false
	register(g)
	g.VisitAll(func(f *pflag.Flag) { docgen.SetAnnotation(f, docgen.GroupAnnotation, group) })
	fs.AddFlagSet(g)
}

// readFlags are what every command that reads records takes: where to
// connect, which keyspaces, and how hard to scan.
type readFlags struct {
	cf   connFlags
	kf   keyspaceFlags
	sf   scanFlags
	snap snapFlags // only for the commands that registerSnapshot
}

// register adds them in help order: keyspace, scan, connection.
func (r *readFlags) register(fs *pflag.FlagSet) {
	registerGroup(fs, docgen.GroupKeyspace, r.kf.register)
	registerGroup(fs, docgen.GroupScan, r.sf.register)
	registerGroup(fs, docgen.GroupConnection, r.cf.register)
}

// registerSnapshot is register with --rdb, --at and --db: for the
// commands that can read a snapshot file instead of a server.
func (r *readFlags) registerSnapshot(fs *pflag.FlagSet) {
	r.register(fs)
	registerGroup(fs, docgen.GroupSnapshot, r.snap.register)
}

// resolveFlags records which of every group's flags were given.
func (r *readFlags) resolveFlags(fs *pflag.FlagSet) {
	r.cf.resolveFlags(fs)
	r.kf.resolveFlags(fs)
	r.sf.resolveFlags(fs)
	r.snap.resolveFlags(fs)
}

// givenFlag is one flag the operator gave (on the command line or as
// IDEMCTL_…), as text: what a command line printed for them repeats.
type givenFlag struct {
	name, kind string   // kind: the value's type, as pflag names it
	values     []string // a list flag's items, else the one value
	list       bool
}

// givenFlags are the flags given, in the order they were set (pflag's
// Visit without SortFlags): the command line first, then the environment.
type givenFlags []givenFlag

// flagsGiven takes the flags given from a parsed flag set.
func flagsGiven(fs *pflag.FlagSet) givenFlags {
	var out givenFlags
	fs.Visit(func(f *pflag.Flag) {
		g := givenFlag{name: f.Name, kind: f.Value.Type(), values: []string{f.Value.String()}}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			g.values, g.list = sv.GetSlice(), true
		}
		out = append(out, g)
	})
	return out
}

func (g givenFlags) has(name string) bool {
	return slices.ContainsFunc(g, func(f givenFlag) bool { return f.name == name })
}

// sharedFlags are the connection, keyspace and scan flags as every command
// registers them, for the help topics, the environment list and man pages.
func sharedFlags() *pflag.FlagSet {
	fs := pflag.NewFlagSet("shared", pflag.ContinueOnError)
	fs.SortFlags = false
	new(readFlags).register(fs)
	return fs
}
