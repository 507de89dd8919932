// Package testutil is what ioshape's tests share: where the repository
// and ../shared are, the one rule for a test that cannot run here (skip
// on a developer's machine, fail under CI=true), and golden files that
// print a diff when they differ.
package testutil
