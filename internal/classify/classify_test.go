package classify

import (
	"testing"
)

func TestCatalogLoads(t *testing.T) {
	pats, err := Catalog()
	if err != nil {
		t.Fatal(err)
	}
	if len(pats) < 30 {
		t.Fatalf("%d patterns", len(pats))
	}
	seen := map[string]bool{}
	for _, p := range pats {
		if seen[p.ID] {
			t.Errorf("duplicate id %s", p.ID)
		}
		seen[p.ID] = true
	}
}

func TestExpectedShapes(t *testing.T) {
	exp, err := ExpectedShapes()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range exp {
		p, s := e.Pattern, e.Shape
		t.Logf("%-38s %-10s size %8d qd %5.1f seq %.2f read %.2f idle %.2f", p.ID, s.Access, s.BlockSizeBytes, s.QueueDepth, s.SequentialFraction, s.ReadFraction, s.IdleFraction)
		if s.QueueDepth != float64(p.Depth()) {
			t.Errorf("%s: simulated depth %v, want %d", p.ID, s.QueueDepth, p.Depth())
		}
		if s.Access != p.Access {
			t.Errorf("%s: simulated access %s, want %s", p.ID, s.Access, p.Access)
		}
		// Every pattern's own shape ranks its own family first.
		if best := Rank(s, exp)[0]; best.Family != p.Family {
			t.Errorf("%s ranks %s (%s) first", p.ID, best.ID, best.Family)
		}
	}
}
