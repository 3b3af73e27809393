package harness

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of the CPU times in /proc/<pid>/stat (USER_HZ, 100 on every Linux this runs on).
const clockTick = 10 * time.Millisecond

// ProcessCPU is the CPU time (user + system) a running process has used so far, from /proc/<pid>/stat. The
// operator's containers run in their own mount namespace, so benchmarks find them by the PIDs
// OperatorReplicas reports, not by their executable's path.
func ProcessCPU(pid int) (time.Duration, error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("read the CPU time of process %d: %w", pid, err)
	}
	// The command is in parentheses and may hold spaces: utime and stime are the 12th and 13th fields after it.
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 || end+2 > len(stat) {
		return 0, fmt.Errorf("process %d: unexpected /proc stat line %q", pid, stat)
	}
	fields := strings.Fields(string(stat[end+2:]))
	if len(fields) < 13 {
		return 0, fmt.Errorf("process %d: /proc stat line has %d fields after the command, want at least 13", pid, len(fields))
	}
	utime, err := strconv.ParseInt(fields[11], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("process %d: utime %q: %w", pid, fields[11], err)
	}
	stime, err := strconv.ParseInt(fields[12], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("process %d: stime %q: %w", pid, fields[12], err)
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// OperatorCPU is the CPU time used so far by the container process of each operator pod that runs one, by pod.
// A container restarted between two readings starts again from zero: compare readings per pod and PID.
func (cp *ControlPlane) OperatorCPU() (map[string]ProcessTime, error) {
	out := map[string]ProcessTime{}
	for _, r := range cp.OperatorReplicas() {
		if r.PID == 0 {
			continue
		}
		t, err := ProcessCPU(r.PID)
		if err != nil {
			return nil, fmt.Errorf("operator pod %s: %w", r.Pod, err)
		}
		out[r.Pod] = ProcessTime{PID: r.PID, CPU: t}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no operator container is running")
	}
	return out, nil
}

// ProcessTime is one process's CPU time at a reading.
type ProcessTime struct {
	PID int
	CPU time.Duration
}

// CPUSince is the CPU time the operator's containers used between two readings of OperatorCPU. A container
// that was replaced in between counts from zero: all of its new process's time is counted.
func CPUSince(before, after map[string]ProcessTime) time.Duration {
	var total time.Duration
	for pod, a := range after {
		if b, ok := before[pod]; ok && b.PID == a.PID {
			total += a.CPU - b.CPU
		} else {
			total += a.CPU
		}
	}
	return total
}
