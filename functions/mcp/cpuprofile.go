//go:build benchprofile

package main

// A CPU profile hook for cmd/bench's limit leg (-limitprofile), compiled only with the
// benchprofile build tag: deployed and `make run` binaries have none. With
// AGENTPACK_CPU_PROFILE=<prefix> set, SIGUSR1 starts a CPU profile into <prefix>-<n>.prof
// (n = 1, 2, …) and SIGUSR2 stops it, then creates <prefix>-<n>.prof.done so that the
// bench knows the file is complete.

import (
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

func init() {
	prefix := os.Getenv("AGENTPACK_CPU_PROFILE")
	if prefix == "" {
		return
	}
	c := make(chan os.Signal, 4)
	signal.Notify(c, syscall.SIGUSR1, syscall.SIGUSR2)
	go func() {
		var f *os.File
		n := 0
		for s := range c {
			switch {
			case s == syscall.SIGUSR1 && f == nil:
				n++
				var err error
				if f, err = os.Create(fmt.Sprintf("%s-%d.prof", prefix, n)); err == nil {
					err = pprof.StartCPUProfile(f)
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, "mcp: cpu profile:", err)
					f = nil
				}
			case s == syscall.SIGUSR2 && f != nil:
				pprof.StopCPUProfile()
				name := f.Name()
				_ = f.Close()
				f = nil
				if d, err := os.Create(name + ".done"); err == nil {
					_ = d.Close()
				}
			}
		}
	}()
}
