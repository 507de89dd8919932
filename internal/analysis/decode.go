package analysis

import (
	"context"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/tracefile"
)

// stopCheckEvery is how many events go by between looks at the context: a
// chunk holds up to 65,536, and a slow fn (events prints each one, about
// 4 µs on a busy machine) made a check every four chunks a second apart.
const stopCheckEvery = 8192

// decodeAhead calls fn for each event r holds, in order, until fn fails or
// ctx is cancelled. The reader decodes the chunks on other goroutines, one
// per core, a few chunks ahead of fn: the order is the file's, so results
// are those of a single goroutine.
func decodeAhead(ctx context.Context, r *tracefile.Reader, fn func(*event.Event) error) error {
	for n := 0; ; {
		b := r.NextBatch()
		if b == nil {
			break
		}
		for i := range b {
			if n++; n%stopCheckEvery == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			if err := fn(&b[i]); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
}
