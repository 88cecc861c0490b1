package testpeer

import (
	"os"
	"strconv"
	"time"
)

// TimeoutScaleEnv names the environment variable that multiplies every readiness deadline
// and generous time bound of the tests (a float ≥ 1; default 1). A slow or busy machine sets
// it higher; the waits themselves end as soon as the peer is ready, so a large scale costs
// nothing when the machine is idle. docs/TESTING.md says which bounds scale and why.
const TimeoutScaleEnv = "TEST_TIMEOUT_SCALE"

// Scaled returns d multiplied by TEST_TIMEOUT_SCALE (values below 1 or unparsable count
// as 1). Use it for deadlines that wait on a peer's readiness and for upper bounds that
// exist to catch a hang, never to shorten a wait.
func Scaled(d time.Duration) time.Duration {
	f, err := strconv.ParseFloat(os.Getenv(TimeoutScaleEnv), 64)
	if err != nil || f < 1 {
		return d
	}
	return time.Duration(float64(d) * f)
}
