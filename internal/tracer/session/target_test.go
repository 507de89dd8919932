package session

import (
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		t    Target
		want string
	}{
		{Target{}, "nothing to record"},
		{Target{All: true, Pids: []int{1}}, "choose one target"},
		{Target{Command: []string{"x"}, All: true}, "choose one target"},
		{Target{Pids: []int{-3}}, "invalid pid"},
		{Target{Names: []string{""}}, "must not be empty"},
		{Target{Command: []string{"x"}, Launch: true}, "--quiet"},
		{Target{All: true, Duration: -time.Second}, "negative"},
	} {
		err := c.t.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want %q", c.t, err, c.want)
		}
	}
	if err := (Target{Command: []string{"cp"}, Launch: true, Quiet: time.Second}).Validate(); err != nil {
		t.Error(err)
	}
}
