package classify

import "sync"

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
		for i := range pats {
			s, ok := ShapeOf(ExpectedProfile(&pats[i]))
			if !ok {
				continue
			}
			expected = append(expected, Expected{Pattern: &pats[i], Shape: s})
		}
	})
	return expected, expectedErr
}
