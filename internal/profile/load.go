package profile

import (
	"github.com/ioshape/ioshape/internal/tracefile"
)

// Load reads a whole trace file into a profile. A trace cut short by a crash
// is profiled as far as it goes; Meta.Footer is nil then.
func Load(path string, opts Options) (tracefile.Meta, *Profile, error) {
	r, err := tracefile.Open(path)
	if err != nil {
		return tracefile.Meta{}, nil, err
	}
	defer r.Close()
	return FromReader(r, opts)
}

// FromReader profiles the rest of an open trace.
func FromReader(r *tracefile.Reader, opts Options) (tracefile.Meta, *Profile, error) {
	meta := r.Meta()
	if meta.Footer != nil && opts.Devices == nil {
		opts.Devices = meta.Footer.Devices
	}
	b := NewBuilder(opts)
	for r.Next() {
		b.Add(r.Event())
	}
	if err := r.Err(); err != nil {
		return meta, nil, err
	}
	p := b.Finish()
	if r.Incomplete() {
		p.Warnings = append(p.Warnings, "the recording did not finish (the recorder was killed or crashed): this is everything it wrote before it stopped")
	}
	return meta, p, nil
}
