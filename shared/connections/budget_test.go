package connections

import (
	"testing"
	"time"
)

// TestTestBudget: an unset or non-positive TestTimeout gives Test the seed's 10 s budget
// (POST /:id/test, timeout 10 s); a positive one is used as it is.
func TestTestBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		set, want time.Duration
	}{
		{0, 10 * time.Second},
		{-time.Second, 10 * time.Second},
		{300 * time.Millisecond, 300 * time.Millisecond},
		{time.Minute, time.Minute},
	} {
		if got := (&Service{TestTimeout: tc.set}).testBudget(); got != tc.want {
			t.Errorf("TestTimeout %v: budget %v, want %v", tc.set, got, tc.want)
		}
	}
}
