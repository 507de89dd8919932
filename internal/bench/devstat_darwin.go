package bench

// deviceReads: macOS keeps no per-device read time that bench could read
// without IOKit; the wait's cost is not measured there.
func deviceReads(string) (reads, bool) { return reads{}, false }

// threadRunDelay: macOS does not tell a thread's time runnable; the
// wake-up counts its time on the CPU only.
func threadRunDelay() (float64, bool) { return 0, false }
