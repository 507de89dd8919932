package analysis

import (
	"context"
	"errors"
	"io"

	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/export"
	"github.com/ioshape/ioshape/internal/predict"
)

// Predict says how long the trace at path would take on drive d, per
// classified phase and per process.
func Predict(ctx context.Context, path string, d *drive.Profile, watch Watch) (*predict.Result, error) {
	meta, err := Meta(path)
	if err != nil {
		return nil, err
	}
	b := predict.NewBuilder()
	if _, _, err := Events(ctx, path, "predicting", watch, func(e *event.Event) error {
		b.Add(e)
		return nil
	}); err != nil {
		return nil, err
	}
	var recorded int64
	if meta.Footer != nil {
		recorded = meta.Footer.DurationNs
	}
	var bounds []predict.Boundary
	class, err := classify.Classify(source(ctx, path, watch), classify.Options{})
	switch {
	case errors.Is(err, classify.ErrNoIO):
		return nil, predict.ErrNoIO
	case err != nil:
		return nil, err
	}
	for _, ph := range class.Phases {
		bounds = append(bounds, predict.Boundary{AtNs: int64(ph.StartS * 1e9), Pattern: ph.Best.Name})
	}
	if len(bounds) > 0 {
		bounds[0].AtNs = 0
	}
	return b.Predict(d, recorded, bounds)
}

// ExportIolog writes the trace at path as a fio version 3 iolog (see
// export.Iolog) and returns the files it names.
func ExportIolog(ctx context.Context, path string, w io.Writer, watch Watch) ([]export.File, int, event.Layer, error) {
	var l export.Iolog
	if _, _, err := Events(ctx, path, "exporting", watch, func(e *event.Event) error {
		l.Add(e)
		return nil
	}); err != nil {
		return nil, 0, 0, err
	}
	files, n, err := l.Write(w)
	return files, n, l.Layer(), err
}
