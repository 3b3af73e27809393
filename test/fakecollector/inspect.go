package fakecollector

// Targets lists the configured targets, sorted.
func (c *Collector) Targets() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return sortedKeys(c.targets)
}

// TargetStatus returns the runtime state of a configured target.
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
	return len(c.applied)
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
