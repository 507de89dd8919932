package export

import (
	"fmt"
	"io"
	"sort"

	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/profile"
)

// JobSplit profiles a trace's events by the part of a fio job file each
// belongs to: a classified phase (by time), or an actor (by program).
type JobSplit struct {
	class     *classify.Result
	byProgram bool
	parts     []JobPart
	layers    []string // the layer each part's shape is read from
	builders  []*profile.Builder
	counters  []JobCounter
	actors    classify.Actors
}

// NewJobSplit splits by class's phases, or with byProgram by its actors
// (phases when it has none).
func NewJobSplit(class *classify.Result, byProgram bool) *JobSplit {
	s := &JobSplit{class: class, byProgram: byProgram && len(class.Actors) > 0}
	s.parts, s.layers = jobParts(class, s.byProgram)
	s.builders = make([]*profile.Builder, len(s.parts))
	s.counters = make([]JobCounter, len(s.parts))
	for i := range s.builders {
		s.builders[i] = profile.NewBuilder(profile.Options{})
	}
	return s
}

// Add counts an event in its part.
func (s *JobSplit) Add(e *event.Event) {
	if i := s.partOf(e); i >= 0 {
		s.builders[i].Add(e)
		s.counters[i].Add(e)
	}
}

func (s *JobSplit) partOf(e *event.Event) int {
	if s.byProgram {
		name := s.actors.Of(e)
		for i, p := range s.parts {
			if p.Name == name {
				return i
			}
		}
		return -1
	}
	at := float64(e.Start-s.class.Origin) / 1e9
	i := sort.Search(len(s.parts), func(k int) bool { return s.parts[k].StartS > at }) - 1
	return max(0, i)
}

// Write writes the job file, titled, and returns its jobs.
func (s *JobSplit) Write(w io.Writer, title string) ([]Job, error) {
	for i := range s.parts {
		p := s.builders[i].Finish()
		s.parts[i].Layer = p.Syscall
		if s.layers[i] == "block" || p.Syscall == nil || p.Syscall.IOs == 0 {
			s.parts[i].Layer = p.Block
		}
		s.counters[i].Fill(&s.parts[i])
	}
	return WriteFioJob(w, title, s.parts, !s.byProgram)
}

// jobParts are the parts a fio job file has, with the layer each one's
// shape was read from.
func jobParts(c *classify.Result, byProgram bool) ([]JobPart, []string) {
	var parts []JobPart
	var layers []string
	if byProgram {
		for _, a := range c.Actors {
			parts = append(parts, JobPart{Name: a.Name, StartS: a.StartS, EndS: a.EndS, Match: a.Best.Name})
			layers = append(layers, a.Shape.Layer)
		}
		return parts, layers
	}
	for i, ph := range c.Phases {
		parts = append(parts, JobPart{Name: fmt.Sprintf("phase%d", i+1), StartS: ph.StartS, EndS: ph.EndS, Match: ph.Best.Name})
		layers = append(layers, ph.Shape.Layer)
	}
	if len(parts) == 0 {
		parts = append(parts, JobPart{Name: "all", EndS: c.Shape.SpanS, Match: c.Matches[0].Name})
		layers = append(layers, c.Shape.Layer)
	}
	return parts, layers
}
