package profile

import (
	"encoding/json"
	"slices"

	"github.com/ioshape/ioshape/internal/event"
)

// unavailableFields are the JSON fields of a Layer each missing metric
// leaves without meaning.
var unavailableFields = map[string][]string{
	event.MetricTiming: {"span_s", "iops", "throughput_mb_s", "interarrival_us", "idle_gap_us", "idle_s",
		"queue_depth", "device_queue_depth"},
	event.MetricFineTiming: {"interarrival_us", "idle_gap_us", "idle_s"},
	event.MetricLatency:    {"latency_us", "queue_depth", "device_queue_depth", "idle_gap_us", "idle_s", "service_fit"},
	event.MetricQueueTime:  {"device_queue_depth"},
	event.MetricSize: {"read_bytes", "write_bytes", "read_fraction_by_bytes", "throughput_mb_s", "size_bytes",
		"service_fit", "sequential_fraction", "seek_distance_bytes"},
	event.MetricDirection: {"reads", "writes", "read_fraction", "read_fraction_by_bytes", "read_bytes", "write_bytes"},
	event.MetricOffset:    {"sequential_fraction", "seek_distance_bytes"},
	event.MetricDetail:    {"interarrival_us", "seek_distance_bytes", "service_fit", "device_queue_depth"},
}

// MarkUnavailable records that the trace cannot show these metrics: each
// layer's JSON then holds null for what depends on them, and the
// processes are dropped if the capture does not say who issued its I/O.
func (p *Profile) MarkUnavailable(metrics []string) {
	if len(metrics) == 0 {
		return
	}
	mark := func(l *Layer) {
		if l != nil {
			l.Unavailable = metrics
		}
	}
	mark(p.Block)
	mark(p.Syscall)
	for i := range p.Devices {
		mark(p.Devices[i].Block)
		mark(p.Devices[i].Syscall)
	}
	if slices.Contains(metrics, event.MetricProcess) {
		p.Processes = nil
	}
}

// Lacks reports whether the layer cannot show a metric.
func (l *Layer) Lacks(metric string) bool { return l != nil && slices.Contains(l.Unavailable, metric) }

// LacksField reports whether a JSON field of the layer is unavailable.
func (l *Layer) LacksField(field string) bool {
	for _, m := range l.Unavailable {
		if slices.Contains(unavailableFields[m], field) {
			return true
		}
	}
	return false
}

// MarshalJSON writes null for the fields the trace cannot show.
func (l *Layer) MarshalJSON() ([]byte, error) {
	type plain Layer
	b, err := json.Marshal((*plain)(l))
	if err != nil || len(l.Unavailable) == 0 {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, metric := range l.Unavailable {
		for _, f := range unavailableFields[metric] {
			m[f] = json.RawMessage("null")
		}
	}
	return json.Marshal(m)
}
