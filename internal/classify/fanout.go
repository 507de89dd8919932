package classify

import (
	"runtime"

	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/profile"
)

// fanOut reads src once and gives every event, in order, to each of
// workers, each on its own goroutine (profile.Fan): the results are those
// of one goroutine. On one core the workers run in turn on the caller's.
func fanOut(src Source, workers ...func(*event.Event)) error {
	if len(workers) == 1 || runtime.GOMAXPROCS(0) == 1 {
		return src(func(e *event.Event) {
			for _, w := range workers {
				w(e)
			}
		})
	}
	f := profile.NewFan(workers...)
	err := src(f.Add)
	f.Wait()
	return err
}
