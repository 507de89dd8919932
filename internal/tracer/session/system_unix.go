//go:build linux || darwin

package session
