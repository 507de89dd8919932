//go:build !(linux && (amd64 || arm64))

package tracer

import "errors"

func nativeAvailable() bool { return false }

func prepareNative(Config) (Session, error) {
	return nil, errors.New("the native backend runs on Linux (x86_64 and arm64) only; use --backend bpftrace or dtrace")
}
