//go:build !linux

package bpftrace

import "errors"

func ensureTracefs() error {
	return errors.New("the bpftrace backend runs on Linux only")
}

func missingTracepoints() []string { return nil }

func probeMisses(int) (int64, bool) { return 0, false }

func markCPU(int) {}

func degradeSyscalls() {}
