// Package dscripts holds the tracer scripts ioshape runs (bpftrace on Linux,
// D for DTrace), embedded in the binary so a recording never depends on files
// beside it. The scripts are templates; internal/tracer renders them.
package dscripts

import _ "embed"

// Bpftrace is the Linux tracer script, a text/template.
//
//go:embed ioshape.bt
var Bpftrace string

// DTrace is the script for DTrace systems (macOS first), a text/template.
//
//go:embed ioshape.d
var DTrace string
