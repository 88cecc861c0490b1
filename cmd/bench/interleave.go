package main

import (
	"slices"
	"sync"
	"time"
)

// Interleaved and open-loop loads for the limit leg. The development machine is shared (up
// to eight engineers on 2 cores), so absolute figures drift by the minute; a ratio between
// two legs measured minutes apart measures the drift. These helpers alternate the legs in
// short rounds within one measurement, so each leg sees the same machine.

// limitRounds is how many rounds each interleaved measurement is cut into.
const limitRounds = 8

// loadInterleaved measures every leg with n requests at concurrency conc, in limitRounds
// rounds: each round runs every leg's share in turn (the order rotating each round), and a
// leg's result merges its rounds (percentiles over all its requests; req/s = its requests ÷
// the sum of its rounds' wall times). With w, each result's cpu says the CPU per call of
// every process group over the leg's rounds (proccpu.go).
func loadInterleaved(legs []*leg, n, conc int, w *cpuWatch) []result {
	per := max(n/limitRounds, conc)
	lat := make([][]time.Duration, len(legs))
	cpu := make([][]time.Duration, len(legs))
	wall := make([]time.Duration, len(legs))
	errs := make([]int64, len(legs))
	first := make([]string, len(legs))
	for round := range limitRounds {
		for k := range legs {
			i := (k + round) % len(legs)
			var before []time.Duration
			if w != nil {
				before = w.sample(false)
			}
			r, l := legs[i].loadRaw(per, conc)
			if w != nil {
				after := w.sample(true)
				if cpu[i] == nil {
					cpu[i] = make([]time.Duration, len(after))
				}
				for g := range after {
					cpu[i][g] += after[g] - before[g]
				}
			}
			lat[i] = append(lat[i], l...)
			wall[i] += r.el
			errs[i] += r.errors
			if first[i] == "" {
				first[i] = r.firstErr
			}
		}
	}
	out := make([]result, len(legs))
	for i, l := range legs {
		slices.Sort(lat[i])
		m := len(lat[i])
		out[i] = result{name: l.name, conc: conc, p50: lat[i][m/2], p99: lat[i][m*99/100],
			rps: float64(m) / wall[i].Seconds(), errors: errs[i], firstErr: first[i], cpu: w.perCall(cpu[i], m)}
	}
	return out
}

// rawLoad is one closed-loop run's wall time and errors.
type rawLoad struct {
	el       time.Duration
	errors   int64
	firstErr string
}

// loadRaw is load without the summary: the run's latencies (unsorted) and wall time.
func (l *leg) loadRaw(n, conc int) (rawLoad, []time.Duration) {
	lat := make([]time.Duration, n)
	var mu sync.Mutex
	var out rawLoad
	var next int
	var wg sync.WaitGroup
	t0 := time.Now()
	for range conc {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				s := time.Now()
				err := l.do()
				lat[i] = time.Since(s)
				if err != nil {
					mu.Lock()
					out.errors++
					if out.firstErr == "" {
						out.firstErr = err.Error()
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	out.el = time.Since(t0)
	return out, lat
}

// openLoop offers l requests at a fixed rate (requests/s) for n requests, whatever the
// answers' speed: request i is due at start + i/rate and its latency counts from then, so
// a stall shows in every request queued behind it (no coordinated omission). It returns
// the p50 and p99 (and every latency), the achieved rate (answers ÷ wall time, which falls below rate when
// the leg cannot hold it) and the errors. At most 256 requests are outstanding; past that
// a request waits for a slot, and its wait counts.
func (l *leg) openLoop(rate float64, n int) (result, []time.Duration) {
	interval := time.Duration(float64(time.Second) / rate)
	lat := make([]time.Duration, n)
	slots := make(chan struct{}, 256)
	var mu sync.Mutex
	r := result{name: l.name}
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range n {
		due := t0.Add(time.Duration(i) * interval)
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			err := l.do()
			lat[i] = time.Since(due)
			if err != nil {
				mu.Lock()
				r.errors++
				if r.firstErr == "" {
					r.firstErr = err.Error()
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	el := time.Since(t0)
	out := slices.Clone(lat)
	slices.Sort(lat)
	r.p50, r.p99, r.rps = lat[n/2], lat[n*99/100], float64(n)/el.Seconds()
	return r, out
}

// openLoopInterleaved runs openLoop on each leg in limitRounds rounds (n requests in all
// per leg, the order rotating), and merges each leg's rounds: percentiles over all its
// requests, the achieved rate averaged over its rounds.
func openLoopInterleaved(legs []*leg, rate float64, n int) []result {
	per := max(n/limitRounds, 10)
	lat := make([][]time.Duration, len(legs))
	out := make([]result, len(legs))
	for round := range limitRounds {
		for k := range legs {
			i := (k + round) % len(legs)
			r, l := legs[i].openLoop(rate, per)
			lat[i] = append(lat[i], l...)
			out[i].rps += r.rps / limitRounds
			out[i].errors += r.errors
			if out[i].firstErr == "" {
				out[i].firstErr = r.firstErr
			}
		}
	}
	for i, l := range legs {
		slices.Sort(lat[i])
		m := len(lat[i])
		out[i].name, out[i].p50, out[i].p99 = l.name, lat[i][m/2], lat[i][m*99/100]
	}
	return out
}
