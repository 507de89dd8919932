// Package store keeps traces in a per-user directory: the XDG data
// directory on Linux, ~/Library/Application Support on macOS. Under sudo the
// directory is the invoking user's and everything written there is handed
// to that user, so a trace recorded as root stays readable without root.
//
// Traces have short IDs; any command can name one by ID, by a unique ID
// prefix, by label, or by file path.
package store
