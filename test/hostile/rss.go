package hostile

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// RSS is what a process held while a function ran, in bytes: its resident memory before, and the peak.
type RSS struct {
	Before, Peak uint64
}

func (r RSS) String() string {
	return fmt.Sprintf("peak RSS %4d MB (%d MB before)", r.Peak>>20, r.Before>>20)
}

// MeasureRSS runs f and reports the process's peak resident memory meanwhile: the kernel's high-water mark
// (VmHWM), reset before f runs (clear_refs), and where that cannot be reset, the highest VmRSS sampled every
// 5ms. The garbage of earlier work is returned to the system first, so that each measure starts low.
func MeasureRSS(f func()) RSS {
	runtime.GC()
	debug.FreeOSMemory()
	resetHWM := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	before := status("VmRSS")
	var sampled atomic.Uint64
	sampled.Store(before)
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if v := status("VmRSS"); v > sampled.Load() {
					sampled.Store(v)
				}
			}
		}
	}()
	f()
	close(done)
	peak := sampled.Load()
	if resetHWM {
		peak = max(peak, status("VmHWM"))
	}
	return RSS{Before: before, Peak: peak}
}

// status is a field of /proc/self/status in bytes (0 when it cannot be read).
func status(field string) uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		name, value, ok := strings.Cut(s.Text(), ":")
		if !ok || name != field {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
