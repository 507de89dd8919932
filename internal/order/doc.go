// Package order keeps values in order of an int64 key, a time: a binary
// min-heap, and a queue for values that come nearly in order (a tracer's
// I/O, written as each completes, re-sorted by arrival). Both are written
// out rather than through container/heap: the profile and the prediction
// push and pop every event, and interface calls there cost more than the
// comparisons. FloorDiv is the time bin both bin by.
package order
