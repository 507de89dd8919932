// Package cli is ioshape's command line: one file per command, each an
// options struct, flags, and a run function. It is the only package that
// imports cobra, and the one place where errors become exit codes.
package cli
