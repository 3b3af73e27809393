package shard

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The simulation runs members the way the controller will: each with its own
// view of the Leases and Clusters, filled by a lagging watch, writing only
// with conditional updates, renewing its Lease, pausing (SIGSTOP) and
// resuming to act on what it saw before, crashing (SIGKILL), joining and
// leaving, while Cluster costs change. After every step it checks that no two members may push for one
// Cluster, that a member may push only at the recorded ownership, and that
// pushes of different members never overlap in time.

const simLease = 10 * time.Second

// stored is an object in the API server, with its resourceVersion.
type stored[T any] struct {
	value   T
	version int
}

// observedLease is a Lease in a member's view: RenewTime is when the member
// saw this version.
type observedLease = stored[Lease]

// push is a push to a Cluster's collectors, in flight from start to end.
type push struct {
	member     string
	generation int64
	start, end time.Time
}

// process is one operator replica's process. A new process is a new member.
type process struct {
	id              string
	running, paused bool
	renewSent       time.Time // when it sent its last renewal that succeeded
	leaseVersion    int
	leaving, dead   bool
	leases          map[string]observedLease
	clusters        map[string]stored[ClusterState]
	pushEnds        map[string]time.Time // per Cluster, when its last push ends
}

func (p *process) self() Lease {
	return Lease{Holder: p.id, RenewTime: p.renewSent, Duration: simLease, Leaving: p.leaving, Dead: p.dead}
}

type world struct {
	t        *testing.T
	rng      *rand.Rand
	now      time.Time
	clusters []Cluster
	leases   map[string]*stored[Lease]
	states   map[string]*stored[ClusterState]
	procs    []*process
	pushes   map[string][]push
	joined   int
	counts   map[string]int // how often each interesting thing happened
}

func newWorld(t *testing.T, seed uint64) *world {
	w := &world{
		t:      t,
		rng:    rand.New(rand.NewPCG(seed, 0x51)),
		now:    t0,
		leases: map[string]*stored[Lease]{},
		states: map[string]*stored[ClusterState]{},
		pushes: map[string][]push{},
		counts: map[string]int{},
	}
	for i := range 3 + w.rng.IntN(4) {
		key := fmt.Sprintf("ns/c%d", i)
		w.clusters = append(w.clusters, Cluster{Key: key, Cost: 1 + w.rng.IntN(5)})
		w.states[key] = &stored[ClusterState]{version: 1}
	}
	for range 1 + w.rng.IntN(3) {
		w.join()
	}
	return w
}

func (w *world) join() *process {
	w.joined++
	p := &process{
		id:       fmt.Sprintf("gnmic-operator-6d4b9c7f8-p%03d", w.joined),
		running:  true,
		leases:   map[string]observedLease{},
		clusters: map[string]stored[ClusterState]{},
		pushEnds: map[string]time.Time{},
	}
	w.leases[p.id] = &stored[Lease]{value: Lease{Holder: p.id, RenewTime: w.now, Duration: simLease}, version: 1}
	p.renewSent, p.leaseVersion = w.now, 1
	w.procs = append(w.procs, p)
	return p
}

// active processes can act: running and not paused.
func (w *world) active() []*process {
	var ps []*process
	for _, p := range w.procs {
		if p.running && !p.paused {
			ps = append(ps, p)
		}
	}
	return ps
}

func (w *world) running() []*process {
	var ps []*process
	for _, p := range w.procs {
		if p.running {
			ps = append(ps, p)
		}
	}
	return ps
}

// writeOwnLease updates the process's own Lease if nobody changed it since
// its last write; a process that finds its Lease marked dead exits.
func (w *world) writeOwnLease(p *process, change func(*Lease)) bool {
	s := w.leases[p.id]
	if s.version != p.leaseVersion || s.value.Dead {
		p.dead, p.running = true, false
		w.counts["exited after its lease was marked dead"]++
		return false
	}
	change(&s.value)
	s.value.RenewTime = w.now
	s.version++
	p.renewSent, p.leaseVersion = w.now, s.version
	return true
}

func (w *world) renew(p *process) {
	w.writeOwnLease(p, func(*Lease) {})
}

func (w *world) leave(p *process) {
	if w.writeOwnLease(p, func(l *Lease) { l.Leaving = true }) {
		p.leaving = true
	}
}

// release gives the Lease up once the leaving process owns nothing undrained
// and has nothing in flight, then exits.
func (w *world) release(p *process) {
	if !p.leaving {
		return
	}
	for key, c := range p.clusters {
		if c.value.Owner == p.id && !c.value.Drained || w.now.Before(p.pushEnds[key]) {
			return
		}
	}
	if w.writeOwnLease(p, func(l *Lease) { l.Dead = true }) {
		p.dead, p.running = true, false
		w.counts["released its lease"]++
	}
}

// refresh delivers to the process's view the changes the watch has for it:
// each object with probability share.
func (w *world) refresh(p *process, share float64) {
	for _, id := range slices.Sorted(maps.Keys(w.leases)) {
		s := w.leases[id]
		if id == p.id || w.rng.Float64() >= share {
			continue
		}
		if seen, ok := p.leases[id]; !ok || seen.version != s.version {
			l := s.value
			l.RenewTime = w.now
			p.leases[id] = observedLease{value: l, version: s.version}
		}
	}
	for _, c := range w.clusters {
		if w.rng.Float64() < share {
			p.clusters[c.Key] = *w.states[c.Key]
		}
	}
}

// desired is the owner Assign gives every Cluster over the process's view.
func (w *world) desired(p *process) map[string]string {
	leases := []Lease{p.self()}
	for _, l := range p.leases {
		leases = append(leases, l.value)
	}
	owners := map[string]string{}
	for k, c := range p.clusters {
		owners[k] = c.value.Owner
	}
	return Assign(AssignInput{Members: ReadyMembers(leases, w.now), Clusters: w.clusters, Owners: owners}).Owners
}

// view is what the process decides on for one Cluster.
func (w *world) view(p *process, key string, desired map[string]string) View {
	state := p.clusters[key].value
	v := View{Self: p.self(), Cluster: state, Desired: desired[key]}
	if state.Owner != "" && state.Owner != p.id {
		v.Owner = p.leases[state.Owner].value
	}
	return v
}

// staleOwner tells whether the process's view makes it the owner of a
// Cluster that was taken over since.
func (w *world) staleOwner(p *process, key string) bool {
	c := p.clusters[key].value
	return c.Owner == p.id && !c.Drained && c.Generation < w.states[key].value.Generation
}

// markDead marks dead every Lease the process may, each with a conditional
// update on the version it observed.
func (w *world) markDead(p *process) {
	for _, id := range slices.Sorted(maps.Keys(p.leases)) {
		seen := p.leases[id]
		if !MayMarkDead(p.self(), seen.value, w.now) {
			continue
		}
		s := w.leases[id]
		if s.version != seen.version {
			w.counts["mark refused: the lease changed"]++
			continue
		}
		s.value.Dead = true
		s.version++
		l := s.value
		l.RenewTime = w.now
		p.leases[id] = observedLease{value: l, version: s.version}
		w.counts["marked a lease dead"]++
	}
}

// act lets the process decide about one Cluster and do what it may.
func (w *world) act(p *process, key string, desired map[string]string) {
	v := w.view(p, key, desired)
	if w.staleOwner(p, key) {
		w.counts["acted on a stale ownership"]++
	}
	switch Decide(v, w.now) {
	case Reconcile:
		w.push(p, key, v)
	case Drain:
		if w.now.Before(p.pushEnds[key]) {
			return // the reconcile in flight finishes first
		}
		w.write(p, key, Event{Kind: Acknowledged, Member: p.id, Generation: v.Cluster.Generation})
	case TakeOver:
		kind := "took over a free cluster"
		switch {
		case v.Cluster.Owner == p.id:
			kind = "took a drained cluster back"
		case v.Cluster.Drained:
			kind = "took over after an acknowledgement"
		case v.Cluster.Owner != "":
			kind = "took over from a dead owner"
		}
		if w.write(p, key, Event{Kind: TookOver, Member: p.id, Generation: v.Cluster.Generation}) {
			w.counts[kind]++
		}
	}
}

// write applies the event if the Cluster did not change since the process
// read it; otherwise the process reads it again.
func (w *world) write(p *process, key string, e Event) bool {
	s := w.states[key]
	if p.clusters[key].version != s.version {
		p.clusters[key] = *s
		w.counts["write conflicted"]++
		return false
	}
	next, err := Transition(s.value, e)
	if err != nil {
		w.t.Fatalf("%s: %v on the state it observed, %+v", p.id, err, s.value)
	}
	s.value = next
	s.version++
	p.clusters[key] = *s
	return true
}

// push starts a push, bounded by the process's Lease as a context deadline
// would bound it, and checks it against the recorded state and every other
// member's pushes.
func (w *world) push(p *process, key string, v View) {
	s := w.states[key].value
	if !s.MayPush(p.id, v.Cluster.Generation) {
		w.t.Fatalf("%s may push %s at generation %d, but the cluster is %+v", p.id, key, v.Cluster.Generation, s)
	}
	length := simLease / 10
	if w.rng.IntN(5) == 0 {
		length = 2 * simLease // paused in the middle of the push
	}
	end := w.now.Add(time.Duration(w.rng.Int64N(int64(length))))
	if deadline := p.self().Expiry(); deadline.Before(end) {
		end = deadline
	}
	inFlight := w.pushes[key][:0]
	for _, other := range w.pushes[key] {
		if !w.now.Before(other.end) {
			continue // finished: the clock never goes back, so it can overlap nothing any more
		}
		if other.member != p.id {
			w.t.Fatalf("%s pushes %s at generation %d from %v while %s's push at generation %d runs until %v",
				p.id, key, v.Cluster.Generation, w.now.Sub(t0), other.member, other.generation, other.end.Sub(t0))
		}
		inFlight = append(inFlight, other)
	}
	w.pushes[key] = append(inFlight, push{member: p.id, generation: v.Cluster.Generation, start: w.now, end: end})
	if p.pushEnds[key].Before(end) {
		p.pushEnds[key] = end
	}
	w.counts["pushed"]++
}

// check asks every running process, paused ones included as if they resumed
// now, what it may do with every Cluster: at most one may reconcile each, and
// only at the recorded ownership.
func (w *world) check() {
	desired := map[string]map[string]string{}
	for _, p := range w.running() {
		desired[p.id] = w.desired(p)
	}
	for _, c := range w.clusters {
		var reconcilers []string
		for _, p := range w.running() {
			v := w.view(p, c.Key, desired[p.id])
			if w.staleOwner(p, c.Key) {
				w.counts["checked a stale ownership"]++
			}
			if Decide(v, w.now) != Reconcile {
				continue
			}
			reconcilers = append(reconcilers, p.id)
			if s := w.states[c.Key].value; !s.MayPush(p.id, v.Cluster.Generation) {
				w.t.Fatalf("%s would reconcile %s at generation %d, but the cluster is %+v", p.id, c.Key, v.Cluster.Generation, s)
			}
		}
		if len(reconcilers) > 1 {
			w.t.Fatalf("%v would all reconcile %s", reconcilers, c.Key)
		}
	}
}

// step does one random thing.
func (w *world) step() {
	active := w.active()
	pick := func(ps []*process) *process { return ps[w.rng.IntN(len(ps))] }
	switch r := w.rng.IntN(100); {
	case r < 2: // a Cluster gains or loses targets or pods: desired owners shift
		w.clusters[w.rng.IntN(len(w.clusters))].Cost = 1 + w.rng.IntN(5)
	case r < 12:
		w.now = w.now.Add(time.Duration(w.rng.Int64N(int64(simLease / 3))))
	case r < 14:
		w.now = w.now.Add(time.Duration(w.rng.Int64N(int64(2 * simLease))))
	case r < 30 && len(active) > 0:
		w.renew(pick(active))
	case r < 48 && len(active) > 0:
		w.refresh(pick(active), 0.5)
	case r < 75 && len(active) > 0:
		p := pick(active)
		w.act(p, w.clusters[w.rng.IntN(len(w.clusters))].Key, w.desired(p))
	case r < 80 && len(active) > 0:
		w.markDead(pick(active))
	case r < 84 && len(active) > 0:
		pick(active).paused = true
	case r < 90:
		var paused []*process
		for _, p := range w.running() {
			if p.paused {
				paused = append(paused, p)
			}
		}
		if len(paused) > 0 {
			p := pick(paused)
			p.paused = false
			desired := w.desired(p)
			for _, c := range w.clusters { // first thing on waking: act on the old view
				w.act(p, c.Key, desired)
			}
		}
	case r < 92 && len(active) > 0:
		pick(active).running = false // SIGKILL
	case r < 95 && len(w.running()) < 6:
		w.join()
	case r < 97 && len(active) > 0:
		w.leave(pick(active))
	case len(active) > 0:
		w.release(pick(active))
	}
	w.check()
}

// settle resumes every process and lets the members work with fresh views
// and timely renewals until every Cluster is owned by the member Assign
// gives it to, and that member reconciles it.
func (w *world) settle() {
	for _, p := range w.running() {
		p.paused = false
		w.renew(p)
	}
	if w.allLeaving() {
		w.join()
	}
	for range 80 {
		w.now = w.now.Add(simLease / 10)
		for _, p := range w.active() {
			w.renew(p)
		}
		for _, p := range w.active() {
			w.refresh(p, 1)
			w.markDead(p)
			desired := w.desired(p)
			for _, c := range w.clusters {
				w.act(p, c.Key, desired)
			}
			w.release(p)
		}
		w.check()
	}
	for _, c := range w.clusters {
		s := w.states[c.Key].value
		var owner *process
		for _, p := range w.active() {
			if p.id == s.Owner {
				owner = p
			}
		}
		if owner == nil {
			w.t.Fatalf("%s is not owned by a running member after settling: %+v", c.Key, s)
		}
		for _, p := range w.active() {
			v := w.view(p, c.Key, w.desired(p))
			want := Ignore
			if p == owner {
				want = Reconcile
			}
			if v.Desired != s.Owner || Decide(v, w.now) != want {
				w.t.Fatalf("%s owned by %s after settling: %s desires %q and decides %v", c.Key, s.Owner, p.id, v.Desired, Decide(v, w.now))
			}
		}
	}
}

// allLeaving tells whether no running process stays.
func (w *world) allLeaving() bool {
	for _, p := range w.running() {
		if !p.leaving {
			return false
		}
	}
	return true
}

// TestHandoverNeverLetsTwoMembersPushOneCluster runs 200 random histories of
// 400 steps each, then lets each settle, and checks after every step. It
// also checks that the histories went through every path of the handover at
// least a few times, so that a change to the simulation cannot quietly make
// it test less.
func TestHandoverNeverLetsTwoMembersPushOneCluster(t *testing.T) {
	counts := map[string]int{}
	for seed := range 200 {
		w := newWorld(t, uint64(seed))
		for range 400 {
			w.step()
		}
		w.settle()
		for k, n := range w.counts {
			counts[k] += n
		}
	}
	t.Logf("over all runs: %v", counts)
	for _, k := range []string{
		"pushed", "took over a free cluster", "took over after an acknowledgement", "took over from a dead owner",
		"took a drained cluster back", "marked a lease dead", "mark refused: the lease changed",
		"acted on a stale ownership", "checked a stale ownership",
		"exited after its lease was marked dead", "released its lease", "write conflicted",
	} {
		if counts[k] < 5 {
			t.Errorf("the simulation rarely %s (%d times): it tests too little", k, counts[k])
		}
	}
}
