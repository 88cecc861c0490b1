package gateway

import (
	"os"
	"runtime/debug"
)

// gcPercent is the gateway's GOGC unless the environment sets one. The gateway's garbage
// is short-lived request data (each request's body, the upstream's answer, the JSON-RPC
// framing), so at the default 100 the collector runs every few requests on a heap of a
// few MB; 400 trades a little memory for less collector time per request (make bench).
const gcPercent = 400

// memoryLimit is the soft heap limit unless GOMEMLIMIT is set: with GOGC 400 alone the
// gateway's RSS under the proxied load grew past the 40 MB target (make bench); the limit
// makes the collector run earlier once the heap nears it, well under any Lambda memory
// size.
const memoryLimit = 24 << 20

// TuneRuntime applies the gateway's garbage-collector settings (GOGC 400, a 24 MiB soft
// memory limit) unless GOGC / GOMEMLIMIT are set in the environment. The deployed function
// and `make run` both call it, so local measurements match what runs in Lambda.
func TuneRuntime() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
}
