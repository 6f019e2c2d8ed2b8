// Package cli is idemctl's command layer: one cmd_*.go a command, each
// reading its flags into options and calling a run function; output
// formats, exit codes and completion. Its own packages: cli/report (the
// text tables of what the engine read) and cli/docgen (the help, man and
// Markdown pages, drawn from the command tree).
//
// Floor 5 of ARCHITECTURE.md, the command layer: it may import every floor
// below it, never a test kit.
package cli
