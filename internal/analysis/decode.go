package analysis

import (
	"context"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// stopCheckEvery is how many chunks (of up to 65,536 events) go by between
// looks at the context.
const stopCheckEvery = 4

// decodeAhead calls fn for each event r holds, in order, until fn fails or
// ctx is cancelled. The reader decodes the chunks on other goroutines, one
// per core, a few chunks ahead of fn: the order is the file's, so results
// are those of a single goroutine.
func decodeAhead(ctx context.Context, r *tracefile.Reader, fn func(*event.Event) error) error {
	for n := 1; ; n++ {
		b := r.NextBatch()
		if b == nil {
			break
		}
		if n%stopCheckEvery == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		for i := range b {
			if err := fn(&b[i]); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
}
