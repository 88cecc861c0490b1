package main

// Per-process CPU of the limit leg's rows. On the 2-core machine the c=8 rows are
// CPU-bound: a leg's requests/s is about 2 cores ÷ the CPU all processes spend on one of
// its requests (the load client, the proxy under test, the upstream, Postgres). So each
// interleaved row also says where its CPU went: the utime+stime (/proc/<pid>/stat) of
// every process group, read before and after each of the leg's rounds, summed over its
// rounds and divided by its requests. The time is each thread's run time in nanoseconds
// (/proc/<pid>/task/<tid>/schedstat), not utime+stime: those count whole 10 ms ticks, and
// summed over Postgres's dozen processes their rounding swamps a round's share.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// cpuGroup is a named set of processes whose CPU is charged together.
type cpuGroup struct {
	name string
	pids []int
}

// cpuWatch is the process groups the interleaved loads charge to the leg that ran (nil:
// no per-process CPU).
type cpuWatch struct {
	groups []cpuGroup
}

// cpuGroupOrder is the order groups are printed in.
var cpuGroupOrder = []string{"client", "gateway", "bare proxy", "upstream", "postgres"}

// newCPUWatch reads the process tree once: "client" is this process; each of roots (name
// → pid) is that process and its descendants; "postgres" the postmaster of dbURL's
// cluster and its children (every backend; those that start later are not counted);
// "upstream" every other descendant of this process (the demo upstream, server-everything
// and its node). A group it cannot find is left out.
func newCPUWatch(ctx context.Context, dbURL string, roots map[string]int) *cpuWatch {
	parent := map[int]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := procStatFields(pid); len(f) > 2 {
			parent[pid], _ = strconv.Atoi(f[1])
		}
	}
	// under is the root of pid among roots (0: none), walking up the parents.
	under := func(pid int, roots map[int]bool) int {
		for p, hops := pid, 0; p > 1 && hops < 64; p, hops = parent[p], hops+1 {
			if roots[p] {
				return p
			}
		}
		return 0
	}
	self := os.Getpid()
	byRoot := map[int]string{}
	rootSet := map[int]bool{}
	for name, pid := range roots {
		if pid > 0 {
			byRoot[pid], rootSet[pid] = name, true
		}
	}
	pg := postmasterPID(ctx, dbURL)
	members := map[string][]int{"client": {self}}
	for pid := range parent {
		switch {
		case pid == self:
		case pg > 0 && (pid == pg || parent[pid] == pg):
			members["postgres"] = append(members["postgres"], pid)
		case under(pid, rootSet) != 0:
			name := byRoot[under(pid, rootSet)]
			members[name] = append(members[name], pid)
		case under(pid, map[int]bool{self: true}) != 0:
			members["upstream"] = append(members["upstream"], pid)
		}
	}
	w := &cpuWatch{}
	for _, name := range cpuGroupOrder {
		if len(members[name]) > 0 {
			w.groups = append(w.groups, cpuGroup{name: name, pids: members[name]})
		}
	}
	return w
}

// postmasterPID is the postmaster of dbURL's cluster (the first line of its data
// directory's postmaster.pid), or 0 when it cannot be read (not a superuser, another host).
func postmasterPID(ctx context.Context, dbURL string) int {
	c, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return 0
	}
	defer c.Close(ctx)
	var dir string
	if c.QueryRow(ctx, `SHOW data_directory`).Scan(&dir) != nil {
		return 0
	}
	b, err := os.ReadFile(filepath.Join(dir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	return pid
}

// procStatFields is /proc/<pid>/stat after the command name: [0] state, [1] ppid, …,
// [11] utime, [12] stime (nil when unreadable).
func procStatFields(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// sample is each group's CPU so far (the order of w.groups). The client is read last, so
// that reading the others is not charged to it; end reads it first.
func (w *cpuWatch) sample(end bool) []time.Duration {
	out := make([]time.Duration, len(w.groups))
	read := func(i int) {
		for _, pid := range w.groups[i].pids {
			out[i] += procRunTime(pid)
		}
	}
	if end {
		for i, g := range w.groups {
			if g.name == "client" {
				read(i)
			}
		}
	}
	for i, g := range w.groups {
		if g.name != "client" {
			read(i)
		}
	}
	if !end {
		for i, g := range w.groups {
			if g.name == "client" {
				read(i)
			}
		}
	}
	return out
}

// cpuPerCall renders per (each group's CPU over a leg's rounds) ÷ calls: "client 0.31,
// gateway 0.52, … ms (total 1.40 ms)", groups that spent nothing left out.
func (w *cpuWatch) perCall(per []time.Duration, calls int) string {
	if w == nil || calls == 0 || len(per) == 0 {
		return ""
	}
	var parts []string
	var total time.Duration
	for i, g := range w.groups {
		if per[i] == 0 {
			continue
		}
		total += per[i]
		parts = append(parts, fmt.Sprintf("%s %.3f", g.name, float64(per[i].Microseconds())/1000/float64(calls)))
	}
	return fmt.Sprintf("CPU per call by process: %s ms (total %.3f ms)", strings.Join(parts, ", "),
		float64(total.Microseconds())/1000/float64(calls))
}

// procRunTime is the time pid's threads have run on a CPU (the first field of each
// /proc/<pid>/task/<tid>/schedstat, in ns); 0 when unreadable. Threads that exited are
// not counted.
func procRunTime(pid int) time.Duration {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tids, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var sum time.Duration
	for _, t := range tids {
		b, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue
		}
		f, _, _ := strings.Cut(string(b), " ")
		ns, _ := strconv.ParseInt(f, 10, 64)
		sum += time.Duration(ns)
	}
	return sum
}
