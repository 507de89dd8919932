// Package event is ioshape's model of one I/O: what an application asked for
// (the syscall layer) or what a drive was sent (the block layer).
//
// Every other step of the pipeline (parse → store → profile → report) speaks
// in these types. The package imports nothing of ioshape's and does no I/O.
package event
