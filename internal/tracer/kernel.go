package tracer

// KernelRelease is the running kernel's release string.
func KernelRelease() string { return kernelRelease() }
