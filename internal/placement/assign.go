package placement

import "slices"

// assignRest gives every target that has no pod yet, in alphabetical order
// (or in p.order), the highest-scoring pod that still has room for its
// weight. A target that fits nowhere stays unplaced.
func (p *planner) assignRest() {
	open := p.openPods()
	for n := range p.queue {
		k := n
		if p.order != nil {
			k = int(p.order[n])
		}
		q := &p.queue[k]
		if q.weight > p.capacity {
			continue
		}
		if len(open.keys) == 0 {
			return
		}
		j := open.best(q.hash, q.weight)
		if j < 0 {
			continue
		}
		q.pod = open.pods[j]
		p.entries[q.index].pod = q.pod
		p.load[q.pod] += q.weight
		open.take(j, q.weight)
	}
}

// openPods lists the pods that have room left, in ascending ordinal order.
// A pod drops out of the list when it fills up, so scoring a target costs
// one score per pod that could still take it, never a sort of all pods.
type openPods struct {
	keys []uint64 // podKey of each open pod
	pods []int32  // index of each open pod
	room []int    // capacity left on each open pod
	// minRoom is at most the smallest room: a target no heavier fits on
	// every open pod.
	minRoom int
}

func (p *planner) openPods() openPods {
	open := openPods{minRoom: p.capacity}
	for pod := range p.pods.len() {
		if room := p.capacity - p.load[pod]; room > 0 {
			open.keys = append(open.keys, p.pods.keys[pod])
			open.pods = append(open.pods, int32(pod))
			open.room = append(open.room, room)
			open.minRoom = min(open.minRoom, room)
		}
	}
	return open
}

// best returns the position of the open pod where a target with this hash
// scores highest among those with room for weight, or -1. Of pods with equal
// scores the first, which has the lowest ordinal, wins.
func (o *openPods) best(hash uint64, weight int) int {
	if weight <= o.minRoom {
		return argmax(o.keys, hash)
	}
	best, at := uint64(0), -1
	for j, key := range o.keys {
		if s := scoreHashed(hash, key); (s > best || at < 0) && o.room[j] >= weight {
			best, at = s, j
		}
	}
	return at
}

// argmax is best when every open pod has room: the hot loop of Place, one
// score per open pod, kept free of anything else.
func argmax(keys []uint64, hash uint64) int {
	if len(keys) == 0 {
		return -1
	}
	best, at := scoreHashed(hash, keys[0]), 0
	for j := 1; j < len(keys); j++ {
		if s := scoreHashed(hash, keys[j]); s > best {
			best, at = s, j
		}
	}
	return at
}

// take uses weight units of the room of the open pod at position j, and
// drops the pod when it is full, keeping the others in ordinal order.
func (o *openPods) take(j, weight int) {
	o.room[j] -= weight
	if o.room[j] > 0 {
		o.minRoom = min(o.minRoom, o.room[j])
		return
	}
	o.keys = slices.Delete(o.keys, j, j+1)
	o.pods = slices.Delete(o.pods, j, j+1)
	o.room = slices.Delete(o.room, j, j+1)
}
