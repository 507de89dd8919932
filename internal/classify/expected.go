package classify

import (
	"runtime"
	"sync"
)

// Expected is a pattern with the shape its simulated stream profiles to.
type Expected struct {
	Pattern *Pattern
	Shape   Shape
}

var (
	expectedOnce sync.Once
	expected     []Expected
	expectedErr  error
)

// ExpectedShapes profiles every catalog pattern (once per process).
func ExpectedShapes() ([]Expected, error) {
	expectedOnce.Do(func() {
		pats, err := Catalog()
		if err != nil {
			expectedErr = err
			return
		}
		// Each pattern's simulation is its own: they run on every core.
		shapes := make([]Shape, len(pats))
		ok := make([]bool, len(pats))
		var next sync.WaitGroup
		work := make(chan int)
		for range runtime.GOMAXPROCS(0) {
			next.Add(1)
			go func() {
				defer next.Done()
				for i := range work {
					shapes[i], ok[i] = ShapeOf(ExpectedProfile(&pats[i]))
				}
			}()
		}
		for i := range pats {
			work <- i
		}
		close(work)
		next.Wait()
		for i := range pats {
			if ok[i] {
				expected = append(expected, Expected{Pattern: &pats[i], Shape: shapes[i]})
			}
		}
	})
	return expected, expectedErr
}
