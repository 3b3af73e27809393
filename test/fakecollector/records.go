package fakecollector

import "time"

// AppliedConfig is one accepted apply: the configuration as sent and what it
// changed.
type AppliedConfig struct {
	Time    time.Time
	Config  Snapshot
	Changes Changes
}

// Snapshot is an applied configuration, per kind and name, with each object
// exactly as it was sent (unknown keys included, durations as sent).
type Snapshot struct {
	Targets             map[string]map[string]any
	Subscriptions       map[string]map[string]any
	Outputs             map[string]map[string]any
	Inputs              map[string]map[string]any
	Processors          map[string]map[string]any
	TunnelTargetMatches map[string]map[string]any
}

// TargetNames lists the snapshot's targets, sorted.
func (s Snapshot) TargetNames() []string { return sortedKeys(s.Targets) }

// Changes is what an apply did to the collector's configuration, per kind.
// A target is Changed when any of its fields changed, and also Reconnected
// when a connection field changed; a changed subscription restarts on every
// target that runs it. Identical objects are untouched and appear nowhere.
// With a change queue the targets' runtime follows later, or not at all for
// changes the queue dropped.
type Changes struct {
	Targets             KindChanges
	Subscriptions       KindChanges
	Outputs             KindChanges
	Inputs              KindChanges
	Processors          KindChanges
	TunnelTargetMatches KindChanges
	Reconnected         []string
}

// KindChanges lists the names of the objects of one kind that an apply added,
// removed and changed, each sorted.
type KindChanges struct {
	Added   []string
	Removed []string
	Changed []string
}

// Empty reports whether nothing of this kind changed.
func (k KindChanges) Empty() bool {
	return len(k.Added) == 0 && len(k.Removed) == 0 && len(k.Changed) == 0
}

// Empty reports whether the apply changed nothing at all.
func (c Changes) Empty() bool {
	for _, k := range []KindChanges{c.Targets, c.Subscriptions, c.Outputs, c.Inputs, c.Processors, c.TunnelTargetMatches} {
		if !k.Empty() {
			return false
		}
	}
	return true
}

// TargetCounts counts what happened to one target name over the collector's
// life, across deletions: how often applies added, removed, changed and
// reconnected it in the configuration, how often it was actually started (by
// an apply, a reconnect or a re-enable, when acted on), how often one of its
// subscriptions was restarted because the subscription changed, and how many
// of its changes the change queue dropped.
type TargetCounts struct {
	Added                int
	Removed              int
	Changed              int
	Reconnected          int
	Starts               int
	SubscriptionRestarts int
	Dropped              int
}

func newSnapshot(raw map[string]map[string]map[string]any) Snapshot {
	kind := func(k string) map[string]map[string]any {
		if len(raw[k]) == 0 {
			return nil
		}
		out := make(map[string]map[string]any, len(raw[k]))
		for name, obj := range raw[k] {
			out[name] = deepCopy(obj).(map[string]any)
		}
		return out
	}
	return Snapshot{
		Targets:             kind(kindTargets),
		Subscriptions:       kind(kindSubscriptions),
		Outputs:             kind(kindOutputs),
		Inputs:              kind(kindInputs),
		Processors:          kind(kindProcessors),
		TunnelTargetMatches: kind(kindTunnelTargetMatches),
	}
}

func newChanges(byKind map[string]*KindChanges, reconnected []string) Changes {
	get := func(k string) KindChanges {
		if byKind[k] == nil {
			return KindChanges{}
		}
		return *byKind[k]
	}
	return Changes{
		Targets:             get(kindTargets),
		Subscriptions:       get(kindSubscriptions),
		Outputs:             get(kindOutputs),
		Inputs:              get(kindInputs),
		Processors:          get(kindProcessors),
		TunnelTargetMatches: get(kindTunnelTargetMatches),
		Reconnected:         reconnected,
	}
}

func (s Snapshot) clone() Snapshot {
	return newSnapshot(map[string]map[string]map[string]any{
		kindTargets: s.Targets, kindSubscriptions: s.Subscriptions, kindOutputs: s.Outputs,
		kindInputs: s.Inputs, kindProcessors: s.Processors, kindTunnelTargetMatches: s.TunnelTargetMatches,
	})
}

func (c Changes) clone() Changes {
	cp := func(k KindChanges) KindChanges {
		return KindChanges{
			Added:   append([]string(nil), k.Added...),
			Removed: append([]string(nil), k.Removed...),
			Changed: append([]string(nil), k.Changed...),
		}
	}
	return Changes{
		Targets: cp(c.Targets), Subscriptions: cp(c.Subscriptions), Outputs: cp(c.Outputs),
		Inputs: cp(c.Inputs), Processors: cp(c.Processors), TunnelTargetMatches: cp(c.TunnelTargetMatches),
		Reconnected: append([]string(nil), c.Reconnected...),
	}
}
