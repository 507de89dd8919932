// Package analysis is where ioshape's steps meet, as pprof's driver is: it
// opens trace files (the only package besides the store and the recorder
// to do so), profiles and classifies them into the reports' values, and
// imports captures into traces — every long step cancellable through a
// context.
package analysis
