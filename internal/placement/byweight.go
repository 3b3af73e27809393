package placement

// fillHeaviestFirst places the queue heaviest first, alphabetically among
// equal weights, each target on its highest-scoring pod with room.
//
// With automatic capacity, a target can find no room although a placement
// from scratch would have fit everything: the targets kept in place fill the
// pods evenly, and a heavy target arrives. Then the capacity is raised to the
// fill bound of that queue (at least by one unit, at most to
// widenedCapacity) and the placement starts again from the current
// assignment, keeping more. At widenedCapacity every target fits whatever
// was kept, so the loop ends; after maxRaises raises it goes there at once.
//
// It reports false when a name turns out to be given twice.
func (p *planner) fillHeaviestFirst(fixedCapacity bool) bool {
	widened := 0
	if !fixedCapacity && p.pods.len() > 0 && len(p.entries) > 0 {
		widened = widenedCapacity(p.entries, p.pods.len())
	}
	for raises := 0; ; raises++ {
		p.orderHeaviestFirst()
		p.assignRest()
		if fixedCapacity || p.capacity >= widened || p.everyQueuedPlaced() {
			return true
		}
		raised := widened
		if raises < maxRaises {
			raised = min(widened, max(p.capacity+1, p.queueFillBound()))
		}
		p.restartWith(raised)
		if p.queueHasDuplicates() {
			return false
		}
	}
}

// maxRaises bounds the raises to the queue's fill bound before the capacity
// goes to widenedCapacity. One raise settles nearly every case: a raise keeps
// more targets in place, so the next queue is rarely heavier.
const maxRaises = 3

// orderHeaviestFirst sets p.order to the queue's positions, heaviest first;
// the queue is in name order, and the sort keeps it among equal weights.
func (p *planner) orderHeaviestFirst() {
	items := make([]weighed, len(p.queue), 2*len(p.queue))
	for k := range p.queue {
		items[k] = weighed{weight: int32(p.queue[k].weight), at: int32(k)}
	}
	sortHeaviestFirst(items, items[len(items):cap(items)])
	p.order = make([]int32, len(items))
	for n, it := range items {
		p.order[n] = it.at
	}
}

func (p *planner) everyQueuedPlaced() bool {
	for k := range p.queue {
		if p.queue[k].pod == unplaced {
			return false
		}
	}
	return true
}

// queueFillBound is fillBound of the queue in p.order: a capacity at which
// this queue, after what was kept, cannot fail.
func (p *planner) queueFillBound() int {
	total, _ := totalAndHeaviest(p.entries)
	return fillBound(total, p.pods.len(), len(p.order), func(n int) int { return p.queue[p.order[n]].weight })
}

// restartWith forgets the placement so far and keeps the current
// assignments again under a new capacity, queueing the rest by name.
func (p *planner) restartWith(capacity int) {
	p.capacity = capacity
	for i := range p.entries {
		p.entries[i].pod = unplaced
	}
	clear(p.load)
	p.returned, p.returns = 0, p.returns[:0]
	p.queue, p.order = nil, nil
	p.keepCurrent()
	p.queueByName()
}
