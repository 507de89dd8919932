package report

import (
	"github.com/ioshape/ioshape/internal/classify"
	"github.com/ioshape/ioshape/internal/predict"
)

// Analysis is everything the reports show of one trace: its profile (with
// the time series) and its classification.
type Analysis struct {
	Show *Show `json:"show"`
	// Class is nil when the trace holds no read or write.
	Class *classify.Result `json:"classification,omitempty"`
	// Prediction, when a drive was given, is how long the workload would
	// take on it.
	Prediction *predict.Result `json:"prediction,omitempty"`
	// Drives, when several were given, is the prediction on each, fastest
	// first (Prediction is the first named's).
	Drives *predict.Ranking `json:"drives,omitempty"`
}

// Name is how views title a trace: its label, else its ID, else its path.
func (t TraceInfo) Name() string {
	switch {
	case t.Label != "":
		return t.Label
	case t.ID != "":
		return t.ID
	}
	return t.Path
}
