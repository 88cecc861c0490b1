package gateway

// FastCalls returns how many tools/call requests the fast path answered so far.
func FastCalls() int64 { return fastCalls.Load() }
