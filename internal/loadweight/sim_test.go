package loadweight

import (
	"fmt"
	"time"
)

// fleet simulates collectors counting their targets' responses: each target answers at rate(target,
// second) responses per second on its pod, and a scrape reads every pod's counters.
type fleet struct {
	meter   *Meter
	now     time.Time
	poll    time.Duration
	tick    time.Duration // the resolution of counting
	names   []string
	pod     map[string]string
	counter map[string]map[string]float64 // pod -> target -> count
	rate    func(target string, at time.Time) float64
}

func newFleet(settings Settings, n, pods int, rate func(string, time.Time) float64) *fleet {
	f := &fleet{
		meter: NewMeter(settings), now: t0, poll: time.Minute, tick: time.Second, pod: map[string]string{},
		counter: map[string]map[string]float64{}, rate: rate,
	}
	for i := range n {
		name := fmt.Sprintf("t%04d", i)
		f.names = append(f.names, name)
		f.pod[name] = fmt.Sprintf("p%d", i%pods)
	}
	return f
}

// step runs one poll interval, counting in seconds, then scrapes every pod and weighs.
func (f *fleet) step() Weights {
	for s := time.Duration(0); s < f.poll; s += f.tick {
		at := f.now.Add(s)
		for _, name := range f.names {
			pod := f.pod[name]
			if f.counter[pod] == nil {
				f.counter[pod] = map[string]float64{}
			}
			f.counter[pod][name] += f.rate(name, at) * f.tick.Seconds()
		}
	}
	f.now = f.now.Add(f.poll)
	for pod, counts := range f.counter {
		f.meter.Observe(pod, f.now, counts)
	}
	targets := make([]Target, len(f.names))
	for i, name := range f.names {
		targets[i] = Target{Name: name, Declared: 1}
	}
	return f.meter.Weigh(f.now, targets)
}
