package classify

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
)

// Pattern is one catalog entry: a benchmark's test or a reference profile
// of real work, with its parameters and where they come from.
type Pattern struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Family   string `json:"family"`
	Kind     string `json:"kind"` // benchmark or real-work
	Headline bool   `json:"headline,omitempty"`
	// Platform, for real work whose mechanics differ by system (GNU cp
	// on Linux against cp and Finder on macOS): linux or darwin.
	Platform string `json:"platform,omitempty"`

	Sizes       []int64   `json:"sizes"`
	SizeWeights []float64 `json:"size_weights,omitempty"`
	EqualBytes  bool      `json:"equal_bytes,omitempty"`
	QueueDepth  int       `json:"queue_depth"` // outstanding async requests per thread
	Threads     int       `json:"threads"`     // threads, each with QueueDepth outstanding
	Access      string    `json:"access"`      // sequential, random, or mixed
	// SequentialFraction, for mixed access: the share of I/Os that continue
	// the stream (the rest jump to a random place and continue from it).
	SequentialFraction float64   `json:"sequential_fraction,omitempty"`
	ReadFraction       float64   `json:"read_fraction"`
	GapUs              []float64 `json:"gap_us,omitempty"` // think time between a completion and the thread's next I/O: [min, max]
	Duty               float64   `json:"duty,omitempty"`   // bursts: busy share of the time
	IOs                int       `json:"ios,omitempty"`    // I/Os to simulate (default 4000)

	Source   string `json:"source"`
	Verified bool   `json:"verified"`
}

// Depth is the total requested queue depth.
func (p *Pattern) Depth() int { return max(1, p.QueueDepth) * max(1, p.Threads) }

//go:embed catalog.json
var catalogJSON []byte

var (
	catalogOnce sync.Once
	catalog     []Pattern
	catalogErr  error
)

// Catalog returns the embedded patterns.
func Catalog() ([]Pattern, error) {
	catalogOnce.Do(func() {
		var doc struct {
			Patterns []Pattern `json:"patterns"`
		}
		if err := json.Unmarshal(catalogJSON, &doc); err != nil {
			catalogErr = fmt.Errorf("pattern catalog: %w", err)
			return
		}
		for i := range doc.Patterns {
			if err := doc.Patterns[i].validate(); err != nil {
				catalogErr = err
				return
			}
		}
		catalog = doc.Patterns
	})
	return catalog, catalogErr
}

func (p *Pattern) validate() error {
	switch {
	case p.ID == "" || p.Name == "" || p.Family == "" || p.Source == "":
		return fmt.Errorf("pattern %q: id, name, family and source are required", p.ID)
	case len(p.Sizes) == 0:
		return fmt.Errorf("pattern %s: no sizes", p.ID)
	case len(p.SizeWeights) > 0 && len(p.SizeWeights) != len(p.Sizes):
		return fmt.Errorf("pattern %s: size_weights must match sizes", p.ID)
	case p.Access != "sequential" && p.Access != "random" && p.Access != "mixed":
		return fmt.Errorf("pattern %s: access must be sequential, random or mixed", p.ID)
	case p.ReadFraction < 0 || p.ReadFraction > 1:
		return fmt.Errorf("pattern %s: read_fraction out of range", p.ID)
	case len(p.GapUs) != 0 && len(p.GapUs) != 2:
		return fmt.Errorf("pattern %s: gap_us is [min, max]", p.ID)
	case p.Kind != "benchmark" && p.Kind != "real-work":
		return fmt.Errorf("pattern %s: kind must be benchmark or real-work", p.ID)
	}
	return nil
}
