package fakecollector

import (
	"sort"
	"time"
)

// The load model. Every target the collector runs answers its subscriptions at a response rate the test sets
// (SetResponseRate, responses per second for the whole target, spread evenly over its subscriptions), while a
// subscription's data flows: the target started (subscribed), its connection READY and the device did not end
// that subscription's stream. A subscription shown stopped by StaleSubscription still flows, as in gNMIc.
//
// What flows is counted as gNMIc counts it, per target and subscription, in
// gnmic_targets_subscribe_response_received_count{subscription,target}. The pod processes at most its response
// capacity (WithResponseCapacity) per second: above that, the share of every response beyond it is dropped and
// counted in gnmic_targets_dropped_subscribe_responses_count, as gNMIc drops responses its pipeline cannot take
// (its "pipeline backpressure: dropping response"). process_cpu_seconds_total grows by the busy share of one
// core: offered/capacity, at most 1. Like gNMIc's, counters are never deleted: a removed target keeps its
// series at their last value, and a target applied again counts on from there.
//
// Counts accrue from the clock (WithClock) and are brought up to date before anything changes what flows, so
// that a state change splits the time exactly.

// DefaultResponseCapacity is the responses per second a fake pod processes when WithResponseCapacity is not
// given: enough that no test saturates a pod without meaning to.
const DefaultResponseCapacity = 100_000

// WithResponseCapacity sets how many subscribe responses per second the pod processes with its one core;
// beyond it, responses are dropped.
func WithResponseCapacity(perSecond float64) Option {
	return func(c *Collector) { c.load.capacity = perSecond }
}

// WithClock sets the clock that response counts accrue by; the default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *Collector) { c.load.now = now }
}

// loadModel is the collector's traffic: rates set by the test, counters accrued from them. Guarded by the
// collector's mu.
type loadModel struct {
	now      func() time.Time
	capacity float64
	// rates are responses per second by target name, kept across removals.
	rates map[string]float64
	// received and dropped are the counters by target and subscription.
	received, dropped map[seriesKey]float64
	cpuSeconds        float64
	// accruedAt is when counts were last brought up to date.
	accruedAt time.Time
}

type seriesKey struct{ target, subscription string }

func newLoadModel() *loadModel {
	return &loadModel{
		now:      time.Now,
		capacity: DefaultResponseCapacity,
		rates:    map[string]float64{},
		received: map[seriesKey]float64{},
		dropped:  map[seriesKey]float64{},
	}
}

// SetResponseRate makes the named target answer perSecond subscribe responses per second from now on, spread
// evenly over its subscriptions, whenever it collects. The rate outlives the target: it applies again when the
// target is applied again.
func (c *Collector) SetResponseRate(name string, perSecond float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.accrue()
	c.load.rates[name] = max(perSecond, 0)
}

// SetResponseRates sets the response rates of many targets at once (see SetResponseRate).
func (c *Collector) SetResponseRates(rates map[string]float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.accrue()
	for name, perSecond := range rates {
		c.load.rates[name] = max(perSecond, 0)
	}
}

// StaleSubscription makes a running target show one subscription stopped while its data keeps flowing and
// counting: the stale subscription state gNMIc was seen to report (gnmic-api.md). It lasts until the target's
// state is next written (a restart, a reconnect, a subscription change) or until ClearStaleSubscription.
func (c *Collector) StaleSubscription(name, sub string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.targets[name]
	if !ok || t.status.Subscriptions[sub] != SubscriptionRunning {
		return
	}
	t.status.Subscriptions[sub] = SubscriptionStopped
	c.touch(name, t)
}

// ClearStaleSubscription shows the subscription's true state again.
func (c *Collector) ClearStaleSubscription(name, sub string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.targets[name]; ok {
		t.status.Subscriptions = c.subscriptionStates(t, t.subscribed)
		c.touch(name, t)
	}
}

// Load is what a pod's load model shows at a moment.
type Load struct {
	// Offered is the responses per second its targets send; Capacity what it processes at most.
	Offered, Capacity float64
	// CPUSeconds is process_cpu_seconds_total.
	CPUSeconds float64
}

// Saturated reports whether the pod drops responses: its targets offer more than it processes.
func (l Load) Saturated() bool { return l.Offered > l.Capacity }

// Load returns the pod's load now.
func (c *Collector) Load() Load {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.accrue()
	return Load{Offered: sum(c.flows()), Capacity: c.load.capacity, CPUSeconds: c.load.cpuSeconds}
}

// ResponseCounts returns the named target's received and dropped responses, summed over its subscriptions.
func (c *Collector) ResponseCounts(name string) (received, dropped float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.accrue()
	for k, v := range c.load.received {
		if k.target == name {
			received += v
		}
	}
	for k, v := range c.load.dropped {
		if k.target == name {
			dropped += v
		}
	}
	return received, dropped
}

// accrue adds what flowed since the last accrual. It must run, under mu, before anything changes what flows,
// so that what flows now is what flowed since then.
func (c *Collector) accrue() {
	l := c.load
	now := l.now()
	if !l.accruedAt.IsZero() && now.After(l.accruedAt) {
		dt := now.Sub(l.accruedAt).Seconds()
		flows := c.flows()
		offered := sum(flows)
		kept := 1.0
		if offered > l.capacity && offered > 0 {
			kept = l.capacity / offered
		}
		for key, rate := range flows {
			n := rate * dt
			l.received[key] += n
			if kept < 1 {
				l.dropped[key] += n * (1 - kept)
			}
		}
		if l.capacity > 0 {
			l.cpuSeconds += dt * min(offered/l.capacity, 1)
		}
	}
	if l.accruedAt.IsZero() || now.After(l.accruedAt) {
		l.accruedAt = now
	}
}

func sum(flows map[seriesKey]float64) float64 {
	total := 0.0
	for _, rate := range flows {
		total += rate
	}
	return total
}

// flows are the response rates flowing now, by target and subscription.
func (c *Collector) flows() map[seriesKey]float64 {
	flows := map[seriesKey]float64{}
	for name, t := range c.targets {
		rate := c.load.rates[name]
		if rate == 0 || !t.subscribed || c.connectionState(name, t) != ConnectionReady {
			continue
		}
		var subs []string
		for _, sub := range sortedKeys(c.subscriptionStates(t, true)) {
			if _, ended := t.ended[sub]; !ended {
				subs = append(subs, sub)
			}
		}
		for _, sub := range subs {
			flows[seriesKey{name, sub}] = rate / float64(len(subs))
		}
	}
	return flows
}

// sortedSeries lists the keys of a counter map in the order of their labels.
func sortedSeries(m map[seriesKey]float64) []seriesKey {
	keys := make([]seriesKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].subscription != keys[j].subscription {
			return keys[i].subscription < keys[j].subscription
		}
		return keys[i].target < keys[j].target
	})
	return keys
}
