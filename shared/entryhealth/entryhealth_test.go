package entryhealth

import "testing"

func TestAfter(t *testing.T) {
	tests := []struct {
		name   string
		before int
		fail   string
		want   State
	}{
		{"success from healthy", 0, "", State{Status: Healthy}},
		{"success resets failures and error", 5, "", State{Status: Healthy}},
		{"first failure is stale", 0, "boom", State{Status: Stale, ConsecutiveFailures: 1, LastError: "boom"}},
		{"second failure is still stale", 1, "boom", State{Status: Stale, ConsecutiveFailures: 2, LastError: "boom"}},
		{"third failure is down", 2, "timeout", State{Status: Down, ConsecutiveFailures: 3, LastError: "timeout"}},
		{"further failures stay down and keep counting", 7, "boom", State{Status: Down, ConsecutiveFailures: 8, LastError: "boom"}},
		{"a negative count is taken as 0", -4, "boom", State{Status: Stale, ConsecutiveFailures: 1, LastError: "boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := After(tt.before, tt.fail); got != tt.want {
				t.Errorf("After(%d, %q) = %+v, want %+v", tt.before, tt.fail, got, tt.want)
			}
		})
	}
}
