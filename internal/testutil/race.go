//go:build race

package testutil

// Race is true in a binary built with -race, whose detector keeps shadow
// memory beside the heap and slows every access ten to thirty times: the
// tests that bound a command's memory and time then run it built without.
const Race = true
