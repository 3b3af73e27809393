package handover

import (
	"slices"
	"sort"
	"time"
)

// Collector is what a decision needs to know about one collector pod the operator can push to.
type Collector struct {
	Ordinal int
	// Desired are the targets placement wants the pod to hold once everything has settled.
	Desired []string
	// Sent are the targets of the last configuration the pod acknowledged.
	Sent []string
	// Changed are targets both sent and desired whose configuration now differs from the one sent.
	Changed []string
	// Running are the targets the collector lists in its running state. RunningKnown is false when it could
	// not be read now: Running is then what it listed last, still counted as held (a failed read never lets a
	// move through) but not used to judge its progress.
	Running      []string
	RunningKnown bool
}

// Input is one decision's view of a Cluster's collectors.
type Input struct {
	// Collectors are the pods the operator can push to, each at most once.
	Collectors []Collector
	// HeldElsewhere are targets that collectors the operator does not push to still run (pods terminating with
	// their collector still up): a move of such a target waits as for any other holder. Their holder is
	// reported as the ordinal Elsewhere.
	HeldElsewhere []string
	// BatchSize is the most target changes a collector may have outstanding (sent, not yet acted on).
	BatchSize int
	// DropTimeout bounds how long a move waits for the target's old collector to drop it.
	DropTimeout time.Duration
	// RepairAfter is how long a collector may act on none of its outstanding changes before they count as
	// dropped: its sent targets that it does not run are repaired, the targets it runs without being sent are
	// stale. The delay doubles with every repair of the same target. It must exceed the longest time one
	// change can take on a collector (a target start that runs into its timeout).
	RepairAfter time.Duration
	Now         time.Time
}

// Elsewhere is the holder of a target in Input.HeldElsewhere.
const Elsewhere = -1

// Slot is one target on one collector.
type Slot struct {
	Ordinal int
	Target  string
}

// Memory is what one decision hands to the next. Its maps only ever hold entries that are still relevant,
// so it stays bounded by the fleet's targets.
type Memory struct {
	// Waiting is since when each target has been waiting for another collector to drop it.
	Waiting map[string]time.Time
	// Progress is, per collector, how many changes it had not acted on at the last decision and since when
	// that number has not fallen (or since the last step that sent it something).
	Progress map[int]Progress
	// Repairs counts the repairs of a target on a collector, for the backoff.
	Repairs map[Slot]int
}

// Progress tells whether a collector still works off what it was sent: a collector that acts on nothing for
// RepairAfter has dropped what it has not acted on.
type Progress struct {
	Outstanding int
	Since       time.Time
}

// Step is what one collector is sent next.
type Step struct {
	Ordinal int
	// Send are the targets of the collector's next configuration, sorted. Equal to what was sent when the step
	// changes nothing.
	Send []string
	// Update are the targets of Send whose desired configuration goes out now: every added target and the
	// changed ones that fit in the batch. The other targets of Send keep the configuration sent before.
	Update []string
	// Added, Removed and Repaired are this step's changes; Repaired targets are removed now and added again
	// by a later step.
	Added, Removed, Repaired []string
	// Waiting are desired targets held back because another collector still holds them.
	Waiting []string
	// Queued counts the changes that did not fit in this step's batch.
	Queued int
	// Missing are sent targets the collector does not run yet; Stale are targets it runs although they were
	// not sent, for longer than RepairAfter (a dropped removal: the operator cannot take them off).
	Missing, Stale []string
	// Settled is true when the collector runs exactly its desired targets with their desired configuration
	// and this step sends nothing.
	Settled bool
}

// Changes tells whether the step sends the collector anything.
func (s Step) Changes() bool {
	return len(s.Removed)+len(s.Repaired)+len(s.Update) > 0 // Update includes every added target
}

// Overlap is a target sent to its new collector while an old one may still run it.
type Overlap struct {
	Target  string
	To      int
	Holders []int
	Waited  time.Duration
}

// Decision is the next step of every collector.
type Decision struct {
	// Steps, in ordinal order, one per collector of the input.
	Steps    []Step
	Overlaps []Overlap
	Memory   Memory
	// NextLook is the earliest time a wait times out or a repair falls due; zero when none.
	NextLook time.Time
}

// Decide computes every collector's next step. It is deterministic and does not modify its arguments.
func Decide(in Input, mem Memory) Decision {
	return decide(in, mem, true)
}

// decide is Decide; steadyFirst takes a settled collector's step without working it out (settledStep), which
// gives the same step, and finds the holders of only the targets some other collector's step may add: a fleet at
// rest costs one pass over its names, and a fleet where one target changed little more.
func decide(in Input, mem Memory, steadyFirst bool) Decision {
	collectors := slices.Clone(in.Collectors)
	sort.Slice(collectors, func(i, j int) bool { return collectors[i].Ordinal < collectors[j].Ordinal })
	d := Decision{Memory: Memory{Waiting: map[string]time.Time{}, Progress: map[int]Progress{}, Repairs: map[Slot]int{}}}
	if len(collectors) == 0 {
		return d
	}
	d.Steps = make([]Step, len(collectors))
	var unsettled []int
	for i, c := range collectors {
		if steadyFirst {
			if s, ok := settledStep(c); ok {
				d.Steps[i] = s
				continue
			}
		}
		unsettled = append(unsettled, i)
	}
	if len(unsettled) == 0 {
		return d
	}
	var wanted map[string]bool // nil: every target
	if steadyFirst {
		wanted = addable(collectors, unsettled)
	}
	holders := holdersOf(collectors, wanted)
	for _, t := range in.HeldElsewhere {
		if wanted == nil || wanted[t] {
			holders[t] = append(holders[t], Elsewhere)
		}
	}
	for _, i := range unsettled { // in ordinal order, as they were
		d.Steps[i] = d.step(in, mem, collectors[i], holders)
	}
	return d
}

// addable are the targets the collectors at these indexes may be sent anew (desired, not sent): the only ones
// whose holders a step reads.
func addable(collectors []Collector, indexes []int) map[string]bool {
	out := map[string]bool{}
	for _, i := range indexes {
		c := collectors[i]
		sent := setOf(c.Sent)
		for _, t := range c.Desired {
			if !sent[t] {
				out[t] = true
			}
		}
	}
	return out
}

// settledStep is the step of a collector at rest, when it is: it runs exactly what it was sent, which is what
// it should hold, and none of it changed. step would then send the same again, change nothing, remember
// nothing of it (no progress, no repair, no wait) and call it settled.
func settledStep(c Collector) (Step, bool) {
	if !c.RunningKnown || len(c.Changed) > 0 || len(c.Sent) != len(c.Desired) || len(c.Running) != len(c.Desired) {
		return Step{}, false
	}
	if ascending(c.Desired) && slices.Equal(c.Sent, c.Desired) && slices.Equal(c.Running, c.Desired) {
		// The three lists sorted alike (as the operator gives them): no set to build.
		send := slices.Clone(c.Sent)
		if len(send) == 0 {
			send = []string{}
		}
		return Step{Ordinal: c.Ordinal, Send: send, Settled: true}, true
	}
	const inSent, inRunning = 1, 2
	seen := make(map[string]uint8, len(c.Desired))
	for _, n := range c.Desired {
		seen[n] = 0
	}
	if len(seen) != len(c.Desired) {
		return Step{}, false // a name twice
	}
	for _, n := range c.Sent {
		v, ok := seen[n]
		if !ok {
			return Step{}, false
		}
		seen[n] = v | inSent
	}
	for _, n := range c.Running {
		v, ok := seen[n]
		if !ok {
			return Step{}, false
		}
		seen[n] = v | inRunning
	}
	for _, v := range seen {
		if v != inSent|inRunning {
			return Step{}, false
		}
	}
	send := slices.Clone(c.Sent)
	if !slices.IsSorted(send) {
		slices.Sort(send)
	}
	if len(send) == 0 {
		send = []string{}
	}
	return Step{Ordinal: c.Ordinal, Send: send, Settled: true}, true
}

// ascending tells whether names are sorted, each once.
func ascending(names []string) bool {
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			return false
		}
	}
	return true
}

// holdersOf gives, per target of wanted (nil: every target), the collectors that still hold it: those that
// were sent it and those that run it.
func holdersOf(collectors []Collector, wanted map[string]bool) map[string][]int {
	holders := map[string][]int{}
	if wanted != nil && len(wanted) == 0 {
		return holders
	}
	for _, c := range collectors {
		seen := map[string]bool{}
		add := func(names []string) {
			for _, n := range names {
				if (wanted == nil || wanted[n]) && !seen[n] {
					seen[n] = true
					holders[n] = append(holders[n], c.Ordinal)
				}
			}
		}
		add(c.Sent)
		add(c.Running)
	}
	return holders
}

func (d *Decision) step(in Input, mem Memory, c Collector, holders map[string][]int) Step {
	desired, sent, running := setOf(c.Desired), setOf(c.Sent), setOf(c.Running)
	s := Step{Ordinal: c.Ordinal}

	// What the collector has not acted on yet, and what it dropped.
	outstanding := 0
	overdue := map[string]bool{}
	if c.RunningKnown {
		missing, extra := sortedDiff(sent, running), sortedDiff(running, sent)
		quiet := d.quietFor(in, mem, c.Ordinal, len(missing)+len(extra))
		for _, t := range missing {
			if d.dropped(in, quiet, mem.Repairs[Slot{c.Ordinal, t}]) {
				overdue[t] = true
				continue
			}
			s.Missing = append(s.Missing, t)
			outstanding++
		}
		for _, t := range extra {
			if d.dropped(in, quiet, 0) {
				s.Stale = append(s.Stale, t)
				continue
			}
			outstanding++
		}
	} else if p, ok := mem.Progress[c.Ordinal]; ok {
		d.Memory.Progress[c.Ordinal] = p
	}
	for slot, n := range mem.Repairs {
		if slot.Ordinal == c.Ordinal && desired[slot.Target] && !running[slot.Target] {
			d.Memory.Repairs[slot] = n
		}
	}

	// The candidate changes, in the order they are sent: removals and repairs, updates, then adds.
	type change struct {
		target string
		kind   int
	}
	const (
		remove = iota
		repair
		update
		add
	)
	var changes []change
	for _, t := range sortedDiff(sent, desired) {
		changes = append(changes, change{t, remove})
	}
	for _, t := range sortedKeys(overdue) {
		if desired[t] {
			changes = append(changes, change{t, repair})
		}
	}
	changed := setOf(c.Changed)
	for _, t := range sortedKeys(changed) {
		if sent[t] && desired[t] && !overdue[t] {
			changes = append(changes, change{t, update})
		}
	}
	for _, t := range sortedDiff(desired, sent) {
		others := without(holders[t], c.Ordinal)
		if len(others) == 0 {
			changes = append(changes, change{t, add})
			continue
		}
		since, ok := mem.Waiting[t]
		if !ok {
			since = in.Now
		}
		d.Memory.Waiting[t] = since // kept until the target is sent, even when it waits for room in a batch
		if waited := in.Now.Sub(since); waited >= in.DropTimeout {
			d.Overlaps = append(d.Overlaps, Overlap{Target: t, To: c.Ordinal, Holders: others, Waited: waited})
			changes = append(changes, change{t, add})
			continue
		}
		d.lookAt(since.Add(in.DropTimeout))
		s.Waiting = append(s.Waiting, t)
	}

	budget := max(in.BatchSize-outstanding, 0)
	if len(changes) > budget {
		s.Queued = len(changes) - budget
		changes = changes[:budget]
	}
	next := setOf(c.Sent)
	for _, ch := range changes {
		switch ch.kind {
		case remove:
			delete(next, ch.target)
			s.Removed = append(s.Removed, ch.target)
		case repair:
			delete(next, ch.target)
			s.Repaired = append(s.Repaired, ch.target)
			slot := Slot{c.Ordinal, ch.target}
			d.Memory.Repairs[slot] = mem.Repairs[slot] + 1
		case update:
			s.Update = append(s.Update, ch.target)
		case add:
			next[ch.target] = true
			s.Added = append(s.Added, ch.target)
			s.Update = append(s.Update, ch.target)
		}
	}
	// An overlap is only one once the target is really sent.
	d.Overlaps = slices.DeleteFunc(d.Overlaps, func(o Overlap) bool { return o.To == c.Ordinal && !next[o.Target] })
	sort.Strings(s.Update)
	s.Send = sortedKeys(next)
	if len(changes) > 0 {
		// What is sent now is worked off from now on.
		d.Memory.Progress[c.Ordinal] = Progress{Outstanding: d.Memory.Progress[c.Ordinal].Outstanding, Since: in.Now}
	}
	s.Settled = len(changes) == 0 && s.Queued == 0 && len(s.Waiting) == 0 && c.RunningKnown &&
		len(s.Missing) == 0 && len(overdue) == 0 && equalSets(next, desired)
	return s
}

// quietFor records how many changes a collector has not acted on, and tells for how long that number has
// not fallen.
func (d *Decision) quietFor(in Input, mem Memory, ordinal, outstanding int) time.Duration {
	p, ok := mem.Progress[ordinal]
	if !ok || outstanding < p.Outstanding {
		p.Since = in.Now
	}
	p.Outstanding = outstanding
	if outstanding == 0 {
		return 0
	}
	d.Memory.Progress[ordinal] = p
	return in.Now.Sub(p.Since)
}

// dropped tells whether a change a collector has not acted on after being quiet for that long was dropped,
// given how often the target was repaired already; when not yet, it notes when to look again.
func (d *Decision) dropped(in Input, quiet time.Duration, repairs int) bool {
	wait := in.RepairAfter << min(repairs, 6)
	if quiet >= wait {
		return true
	}
	d.lookAt(in.Now.Add(wait - quiet))
	return false
}

func (d *Decision) lookAt(t time.Time) {
	if d.NextLook.IsZero() || t.Before(d.NextLook) {
		d.NextLook = t
	}
}

func setOf(names []string) map[string]bool {
	s := make(map[string]bool, len(names))
	for _, n := range names {
		s[n] = true
	}
	return s
}

func sortedKeys(s map[string]bool) []string {
	out := make([]string, 0, len(s))
	for n := range s {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// sortedDiff lists the names of a that are not in b, sorted.
func sortedDiff(a, b map[string]bool) []string {
	var out []string
	for n := range a {
		if !b[n] {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

func equalSets(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for n := range a {
		if !b[n] {
			return false
		}
	}
	return true
}

func without(ordinals []int, drop int) []int {
	var out []int
	for _, o := range ordinals {
		if o != drop {
			out = append(out, o)
		}
	}
	return out
}
