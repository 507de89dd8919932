package analysis

import (
	"context"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// Decoding a trace costs about half as much as profiling it, so the two
// run on different cores: one goroutine decodes events into batches while
// the caller's function takes the previous ones. The order is the file's,
// so results are those of a single goroutine.
const (
	decodeBatch    = 2048 // events per batch
	batchesInUse   = 4    // batches decoded ahead of, or being taken by, fn
	stopCheckEvery = 16   // batches between looks at the context
)

// decodeAhead calls fn for each event r holds, in order, until fn fails or
// ctx is cancelled. r is not to be used until it returns.
func decodeAhead(ctx context.Context, r *tracefile.Reader, fn func(*event.Event) error) error {
	full := make(chan []event.Event, batchesInUse)
	free := make(chan []event.Event, batchesInUse)
	for range batchesInUse {
		free <- make([]event.Event, 0, decodeBatch)
	}
	quit := make(chan struct{})
	go func() {
		defer close(full)
		for {
			var b []event.Event
			select {
			case b = <-free:
			case <-quit:
				return
			}
			b = b[:0]
			for len(b) < decodeBatch && r.Next() {
				b = append(b, *r.Event())
			}
			if len(b) == 0 {
				return
			}
			full <- b
		}
	}()
	// On an early return the decoder is told to stop, and waited for: r is
	// the caller's again once it has.
	defer func() {
		close(quit)
		for range full {
		}
	}()
	n := 0
	for b := range full {
		if n++; n%stopCheckEvery == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		for i := range b {
			if err := fn(&b[i]); err != nil {
				return err
			}
		}
		free <- b
	}
	return ctx.Err()
}
