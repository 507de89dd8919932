// Package bench measures a drive with fio over the grid of request shapes
// the prediction interpolates on, and returns it as a drive profile. It is
// the only package besides the tracers that runs another program.
package bench
