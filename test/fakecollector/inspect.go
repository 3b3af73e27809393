package fakecollector

import (
	"context"
	"errors"
	"fmt"
)

// Targets lists the targets the collector runs, sorted: what
// GET /api/v1/targets lists.
func (c *Collector) Targets() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return sortedKeys(c.targets)
}

// TargetStatus returns the runtime state of a target the collector runs.
func (c *Collector) TargetStatus(name string) (TargetStatus, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.targets[name]
	if !ok {
		return TargetStatus{}, false
	}
	return t.status.clone(), true
}

// Applied returns every accepted apply, oldest first.
func (c *Collector) Applied() []AppliedConfig {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]AppliedConfig, len(c.applied))
	for i, a := range c.applied {
		out[i] = AppliedConfig{Time: a.Time, Config: a.Config.clone(), Changes: a.Changes.clone()}
	}
	return out
}

// LastApplied returns the latest accepted apply.
func (c *Collector) LastApplied() (AppliedConfig, bool) {
	applied := c.Applied()
	if len(applied) == 0 {
		return AppliedConfig{}, false
	}
	return applied[len(applied)-1], true
}

// ApplyCount is the number of accepted applies (rejected ones are only in
// Requests).
func (c *Collector) ApplyCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.applyCount
}

// Counts returns what happened to a target name so far; zero counts for a
// name never applied.
func (c *Collector) Counts(name string) TargetCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	if counts, ok := c.counts[name]; ok {
		return *counts
	}
	return TargetCounts{}
}

// Requests returns every request received, in order, with its body.
func (c *Collector) Requests() []Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Request, len(c.requests))
	for i, r := range c.requests {
		r.Header = r.Header.Clone()
		r.Body = append([]byte(nil), r.Body...)
		out[i] = r
	}
	return out
}

// ConfiguredTargets lists the targets of the configuration, sorted: what
// GET /api/v1/config/targets lists. With a change queue it can differ from
// Targets, which lists what the collector runs.
func (c *Collector) ConfiguredTargets() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return sortedKeys(c.objects[kindTargets])
}

// Dropped is how many target changes the change queue dropped so far.
func (c *Collector) Dropped() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.queue == nil {
		return 0
	}
	return c.queue.dropped
}

// Pending is how many target changes wait in the change queue, not counting
// the one the worker is acting on.
func (c *Collector) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.queue == nil {
		return 0
	}
	return len(c.queue.entries)
}

// Idle reports whether every queued target change has been acted on. It
// does not wait for start delays, which run on their own timers. Without a
// change queue the collector is always idle.
func (c *Collector) Idle() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queue == nil || c.queue.isIdle()
}

// WaitIdle waits until every queued target change has been acted on, the
// context ends or the collector closes.
func (c *Collector) WaitIdle(ctx context.Context) error {
	c.mu.Lock()
	if c.queue == nil {
		c.mu.Unlock()
		return nil
	}
	idle := c.queue.idle
	c.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-c.done:
		return errors.New("fake collector closed before its change queue was idle")
	case <-ctx.Done():
		return fmt.Errorf("wait for the change queue to be idle: %w", ctx.Err())
	}
}
