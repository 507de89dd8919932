package drive

import (
	"math"
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
	p.IdleWake = &IdleWake{TaskUs: 800, LongTaskUs: 3200, Points: []IdlePoint{{IdleUs: 4000, ExtraUs: 400, LongExtraUs: 800}}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]*IdleWake{
		"no task":    {Points: w.Points},
		"unordered":  {TaskUs: 800, Points: []IdlePoint{w.Points[1], w.Points[0]}},
		"negative":   {TaskUs: 800, Points: []IdlePoint{{IdleUs: 1000, ExtraUs: -1}}},
		"at no idle": {TaskUs: 800, Points: []IdlePoint{{IdleUs: 0, ExtraUs: 10}}},
		"long < 0":   {TaskUs: 800, LongTaskUs: -1, Points: w.Points},
		"long extra": {TaskUs: 800, LongTaskUs: 3200, Points: []IdlePoint{{IdleUs: 1000, ExtraUs: 10, LongExtraUs: -1}}},
	} {
		p.IdleWake = bad
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "idle wake-up") {
			t.Errorf("%s: %v, want an idle wake-up error", name, err)
		}
	}
}

// The extra of a stretch of computation after an idle: a share of the
// short task's up to its length; beyond, growing as the long task's says
// (here by the square root of the length: twice the extra for four times
// the task), up to longReach long tasks; without the long task, the short
// task's.
func TestIdleWakeExtraFor(t *testing.T) {
	w := &IdleWake{TaskUs: 800, LongTaskUs: 3200, Points: []IdlePoint{{IdleUs: 4000, ExtraUs: 400, LongExtraUs: 800}}}
	short := &IdleWake{TaskUs: 800, Points: []IdlePoint{{IdleUs: 4000, ExtraUs: 400}}}
	for _, c := range []struct {
		w                   *IdleWake
		idle, stretch, want float64
	}{
		{w, 4000, 400, 200}, {w, 4000, 800, 400}, {w, 4000, 3200, 800}, {w, 4000, 12800, 1600}, {w, 4000, 1e6, 1600},
		{w, 2000, 3200, 400}, {w, 0, 3200, 0}, {w, 4000, 0, 0},
		{short, 4000, 400, 200}, {short, 4000, 3200, 400}, {short, 4000, 1e6, 400},
	} {
		if got := c.w.ExtraFor(c.idle, c.stretch); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("ExtraFor(%v, %v) = %v, want %v (long task %v)", c.idle, c.stretch, got, c.want, c.w.LongTaskUs)
		}
	}
}
