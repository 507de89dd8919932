//go:build race

package testutil

// Race is true in a binary built with -race, whose detector keeps shadow
// memory beside the heap and slows every access: bounds on a command's
// memory and time are scaled by RaceScale there.
const Race = true
