package gateway

import (
	"os"
	"runtime/debug"

	"github.com/agentpack/gateway/shared/budget"
)

// The gateway's garbage-collector settings (docs/ARCHITECTURE.md "Decisions worth knowing",
// docs/OPERATIONS.md "Runtime settings").
//
// The soft memory limit follows the memory the function is given: Lambda sets
// AWS_LAMBDA_FUNCTION_MEMORY_SIZE (MB, in fact MiB) and the limit is memoryLimitPercent of
// it, leaving the rest to the Lambda runtime, extensions (the ADOT collector layer runs in
// the same sandbox) and what the Go runtime does not count. A fixed limit far under the
// function's memory made the collector run almost continuously once a large catalog grew
// the live heap toward it (measured: 24 MiB at 200 connections tripled the CPU per call).
// Without the variable (make run, tests) the template's MemorySize (budget.DefaultMemoryMB)
// is used, so local measurements run under the deployed settings; the caches' byte bounds
// come from the same figure (budget.MemoryMB).
//
// GOGC stays at gcPercent: the gateway's garbage is short-lived request data (each
// request's body, the upstream's answer, the JSON-RPC framing) over a small live heap, so
// at the default 100 the collector runs every few requests; 400 trades memory, which the
// limit bounds, for less collector time per request (make bench).
const (
	gcPercent          = 400
	memoryLimitPercent = 80
)

// runtimeSettings is what TuneRuntime applies: a GOGC (0 = leave the environment's) and a
// soft memory limit in bytes (0 = leave the environment's), with the memory size they
// were derived from.
type runtimeSettings struct {
	GCPercent   int
	MemoryLimit int64
	MemoryMB    int
}

// deriveRuntime computes the settings from the environment (getenv): an explicit GOGC or
// GOMEMLIMIT always wins (that setting is left to the Go runtime, which already read it);
// otherwise GOGC is gcPercent and the limit is memoryLimitPercent of
// the function's memory (budget.MemoryMB: AWS_LAMBDA_FUNCTION_MEMORY_SIZE MiB, or
// budget.DefaultMemoryMB when that is absent, not an integer, or under budget.MinMemoryMB).
func deriveRuntime(getenv func(string) string) runtimeSettings {
	mb := budget.MemoryMB(getenv)
	s := runtimeSettings{MemoryMB: mb}
	if getenv("GOGC") == "" {
		s.GCPercent = gcPercent
	}
	if getenv("GOMEMLIMIT") == "" {
		s.MemoryLimit = int64(mb) << 20 * memoryLimitPercent / 100
	}
	return s
}

// TuneRuntime applies the gateway's garbage-collector settings (deriveRuntime: GOGC 400 and
// a soft memory limit of 80 % of the function's memory) unless GOGC / GOMEMLIMIT are set
// in the environment. The deployed function and `make run` both call it, so local
// measurements match what runs in Lambda.
func TuneRuntime() {
	s := deriveRuntime(os.Getenv)
	if s.GCPercent != 0 {
		debug.SetGCPercent(s.GCPercent)
	}
	if s.MemoryLimit != 0 {
		debug.SetMemoryLimit(s.MemoryLimit)
	}
}
