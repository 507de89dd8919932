// Package drive is a drive's profile: how it serves each shape of request
// (read or write, sequential or random, size, requests in flight), as
// `ioshape bench` measured it or as a benchmark's headline numbers give
// it, and the service time of any shape, interpolated. It does no I/O.
package drive
