package placement

// fillHeaviestFirst places the queue heaviest first, alphabetically among
// equal weights, each target on its highest-scoring pod with room.
//
// With automatic capacity, a target can find no room although a placement
// from scratch would have fit everything: the targets kept in place leave
// the room scattered over the pods in pieces too small for it. Then the
// capacity is raised to the lowest at which every target has room, found by
// bisection between the balanced capacity (too low) and widenedCapacity (at
// which every target fits whatever was kept), each try starting again from
// the current assignment. A raised capacity keeps more targets in place, so
// moves stay at the lower bound of the capacity finally used.
//
// It reports false when a name turns out to be given twice.
func (p *planner) fillHeaviestFirst(fixedCapacity bool) bool {
	p.orderHeaviestFirst()
	p.assignRest()
	if fixedCapacity || p.pods.len() == 0 || p.everyQueuedPlaced() {
		return true
	}
	tooLow, enough := p.capacity, widenedCapacity(p.entries, p.pods.len())
	for enough-tooLow > 1 {
		try := tooLow + (enough-tooLow)/2
		if !p.placeAgainWithin(try) {
			return false
		}
		if p.everyQueuedPlaced() {
			enough = try
		} else {
			tooLow = try
		}
	}
	if p.capacity != enough {
		return p.placeAgainWithin(enough)
	}
	return true
}

// placeAgainWithin forgets the placement so far and places again from the
// current assignment within a new capacity. It reports false when a name
// turns out to be given twice.
func (p *planner) placeAgainWithin(capacity int) bool {
	p.capacity = capacity
	for i := range p.entries {
		p.entries[i].pod = unplaced
	}
	clear(p.load)
	p.returned, p.returns = 0, p.returns[:0]
	p.queue, p.order = nil, nil
	p.keepCurrent()
	p.queueByName()
	if p.queueHasDuplicates() {
		return false
	}
	p.orderHeaviestFirst()
	p.assignRest()
	return true
}

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
