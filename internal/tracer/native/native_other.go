//go:build !(linux && (amd64 || arm64))

package native

import (
	"context"
	"errors"

	"github.com/ioshape/ioshape/internal/tracer/session"
)

// Session is never made here: the native backend needs Linux.
type Session struct{ session.Described }

// Available is false: the native backend needs Linux.
func Available() bool { return false }

// Prepare says the native backend needs Linux.
func Prepare(session.Config) (*Session, error) {
	return nil, errors.New("the native backend runs on Linux (x86_64 and arm64) only; use --backend bpftrace or dtrace")
}

func (*Session) Run(context.Context, session.Sink) (session.Result, error) {
	return session.Result{}, errors.New("the native backend runs on Linux only")
}
