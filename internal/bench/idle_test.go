package bench

import (
	"context"
	"testing"
)

// The idle wake-up runs for real: a task time, and an extra (none below
// zero) after each idle, by idle ascending.
func TestMeasureIdleWake(t *testing.T) {
	w, ok, err := measureIdleWake(context.Background())
	if err != nil || !ok {
		t.Fatalf("ok %v, %v", ok, err)
	}
	if !(w.TaskUs > 0) || len(w.Points) != len(idleLengths) {
		t.Fatalf("task %v µs, %d points", w.TaskUs, len(w.Points))
	}
	// The long task (a shell starting true three times) takes longer.
	if !(w.LongTaskUs > w.TaskUs) {
		t.Errorf("long task %v µs, short %v", w.LongTaskUs, w.TaskUs)
	}
	for i, pt := range w.Points {
		if pt.IdleUs != float64(idleLengths[i].Microseconds()) || pt.ExtraUs < 0 || pt.LongExtraUs < 0 {
			t.Errorf("point %d: %+v", i, pt)
		}
	}
	t.Logf("%+v", w)
	// Cancelled: the context's error, not a task's.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := measureIdleWake(ctx); err != context.Canceled {
		t.Errorf("cancelled: %v", err)
	}
}
