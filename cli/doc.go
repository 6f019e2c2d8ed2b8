// Package cli is idemctl's command layer: one cmd_*.go a command, each
// reading its flags into options and calling a run function; output
// formats, exit codes, completion and man pages.
//
// Floor 5 of ARCHITECTURE.md, the command layer: it may import every floor
// below it, never a test kit.
package cli
