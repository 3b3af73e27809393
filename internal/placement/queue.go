package placement

// queueByName queues the entries left to place after keepCurrent, by name.
// Each queued item carries what placing its target needs, so that the
// placing pass and the report read the queue in order instead of reaching
// into the entries out of order, a cache miss each time.
func (p *planner) queueByName() {
	n := 0
	for i := range p.entries {
		if p.entries[i].pod == unplaced {
			n++
		}
	}
	order := make([]int32, 0, n)
	for i := range p.entries {
		if p.entries[i].pod == unplaced {
			order = append(order, int32(i))
		}
	}
	sortByName(order, p.targets)
	p.queue = make([]queued, len(order))
	for k, i := range order {
		e := &p.entries[i]
		p.queue[k] = queued{hash: e.hash, from: e.from, weight: int(e.weight), index: i, pod: unplaced}
	}
}

// queued is an entry left to place, with what placing it needs.
type queued struct {
	hash   uint64
	from   int
	weight int
	index  int32 // of the entry and the target
	pod    int32 // where it goes, or unplaced
}

// queueHasDuplicates tells whether a name is given twice among the entries
// left to place; sorted by name, the two are next to each other.
func (p *planner) queueHasDuplicates() bool {
	for k := 1; k < len(p.queue); k++ {
		a, b := &p.queue[k-1], &p.queue[k]
		if a.hash == b.hash && p.targets[a.index].Name == p.targets[b.index].Name {
			return true
		}
	}
	return false
}
