package native

// The native backend's eBPF objects and their Go bindings are generated
// from dscripts/ioshape.bpf.c with clang (Debian's clang, llvm and
// libbpf-dev) and committed, so building ioshape needs no C toolchain.
// .ci/run regenerates them and fails if they differ from what is committed.
//
//go:generate go tool bpf2go -tags linux -target amd64,arm64 -type record -type sample -type sample_head -cflags "-O2 -g -Wall -Werror" ioshape ../../../dscripts/ebpf/ioshape.bpf.c
