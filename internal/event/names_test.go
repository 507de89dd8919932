package event

import "testing"

// A process is its main thread's name: a renamed thread's does not stick,
// an exec does, and before the main thread is seen the first name serves.
func TestProcessNames(t *testing.T) {
	var n ProcessNames
	for _, c := range []struct {
		pid, tid   uint32
		comm, want string
	}{
		{100, 101, "ThreadPoolForeg", "ThreadPoolForeg"}, // only a thread seen yet
		{100, 100, "chromium", "chromium"},               // the main thread
		{100, 102, "PerfettoTrace", "chromium"},          // a renamed thread
		{100, 101, "ThreadPoolForeg", "chromium"},
		{200, 200, "bash", "bash"},
		{200, 200, "cp", "cp"},  // bash exec'd cp
		{200, 201, "xyz", "cp"}, // a thread of cp
		{300, 0, "fio", "fio"},  // no thread IDs
		{300, 0, "fio", "fio"},
	} {
		if got := n.Of(c.pid, c.tid, c.comm); got != c.want {
			t.Errorf("pid %d tid %d %q: %q, want %q", c.pid, c.tid, c.comm, got, c.want)
		}
	}
}
