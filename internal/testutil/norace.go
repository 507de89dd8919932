//go:build !race

package testutil

// Race is true in a binary built with -race (see race.go).
const Race = false
