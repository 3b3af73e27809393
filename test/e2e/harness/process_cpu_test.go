package harness

import (
	"os"
	"testing"
	"time"
)

func TestProcessCPUGrowsWithWork(t *testing.T) {
	before, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	spinUntil := time.Now().Add(300 * time.Millisecond)
	n := 0
	for time.Now().Before(spinUntil) {
		n++
	}
	after, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// 300 ms of spinning on one core is at least 100 ms of CPU even on a busy machine that gave us a third of it.
	if after-before < 100*time.Millisecond {
		t.Errorf("CPU time grew by %v over 300 ms of spinning (%d loops), want at least 100ms", after-before, n)
	}
}

func TestProcessCPUOfAMissingProcessIsAnError(t *testing.T) {
	if _, err := ProcessCPU(1 << 30); err == nil {
		t.Error("ProcessCPU of a PID no process has: got no error")
	}
}

func TestCPUSinceCountsAReplacedContainerFromZero(t *testing.T) {
	before := map[string]ProcessTime{
		"op-0": {PID: 10, CPU: 5 * time.Second},
		"op-1": {PID: 11, CPU: 7 * time.Second},
	}
	after := map[string]ProcessTime{
		"op-0": {PID: 10, CPU: 8 * time.Second}, // same process: 3 s
		"op-1": {PID: 12, CPU: 2 * time.Second}, // restarted: all 2 s
		"op-2": {PID: 13, CPU: time.Second},     // new pod: all 1 s
	}
	if got, want := CPUSince(before, after), 6*time.Second; got != want {
		t.Errorf("CPUSince = %v, want %v", got, want)
	}
}
