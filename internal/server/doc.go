// Package server is `ioshape serve`: a local daemon with pages for the
// store's traces, each report, comparisons, a JSON API for the same, and —
// when it runs as root — recordings started and stopped from the browser
// with live progress.
//
// It may run as root, so: it listens on loopback unless told otherwise;
// checks the Host header against the names it answers to (DNS
// rebinding); requires a per-start secret token, same origin and a
// same-site fetch for every state-changing request; never runs a shell
// (commands are argument vectors, run as the invoking user); accepts only
// exact trace IDs and takes file paths from the store's own listing;
// bounds request bodies; and on shutdown finishes a running recording's
// trace before exiting.
package server
