// Package bpftrace records with bpftrace running ioshape's script
// (dscripts/ioshape.bt): it renders the script for a target, starts
// bpftrace with ioshape's helper as its -c child, and turns its text
// output into records for the session loop.
package bpftrace
