package analysis

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/ioshape/ioshape/internal/drive"
	"github.com/ioshape/ioshape/internal/event"
	"github.com/ioshape/ioshape/internal/predict"
)

func TestDbgPredict(t *testing.T) {
	path := os.Getenv("DBG_TRACE")
	if path == "" {
		t.Skip()
	}
	rd := func(p string) *drive.Profile {
		f, _ := os.Open(p)
		d, err := drive.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	from, to := rd(os.Getenv("DBG_FROM")), rd(os.Getenv("DBG_TO"))
	b := predict.NewBuilder()
	b.SetSynchronous([]event.Dev{{Major: 253, Minor: 0}})
	Events(context.Background(), path, "", nil, func(e *event.Event) error { b.Add(e); return nil })
	predict.Debug = true
	r, err := b.Predict(from, to, 0, nil)
	fmt.Println(r.PredictedS, r.RecordedS, err)
}
