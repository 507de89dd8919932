package drive

import (
	"strings"
	"testing"
)

// The extra after an idle: none after none, linear between the points,
// the longest's beyond them; a profile's points must go by idle.
func TestIdleWakeExtra(t *testing.T) {
	w := &IdleWake{TaskUs: 800, Points: []IdlePoint{{IdleUs: 1000, ExtraUs: 100}, {IdleUs: 4000, ExtraUs: 400}}}
	for _, c := range []struct{ idle, want float64 }{
		{0, 0}, {-5, 0}, {500, 50}, {1000, 100}, {2500, 250}, {4000, 400}, {60000, 400},
	} {
		if got := w.Extra(c.idle); got != c.want {
			t.Errorf("Extra(%v) = %v, want %v", c.idle, got, c.want)
		}
	}
	if got := (*IdleWake)(nil).Extra(5000); got != 0 {
		t.Errorf("not measured: %v, want 0", got)
	}
	p := grid()
	p.IdleWake = w
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]*IdleWake{
		"no task":    {Points: w.Points},
		"unordered":  {TaskUs: 800, Points: []IdlePoint{w.Points[1], w.Points[0]}},
		"negative":   {TaskUs: 800, Points: []IdlePoint{{IdleUs: 1000, ExtraUs: -1}}},
		"at no idle": {TaskUs: 800, Points: []IdlePoint{{IdleUs: 0, ExtraUs: 10}}},
	} {
		p.IdleWake = bad
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "idle wake-up") {
			t.Errorf("%s: %v, want an idle wake-up error", name, err)
		}
	}
}
