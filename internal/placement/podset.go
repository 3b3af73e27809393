package placement

import "slices"

// podSet holds the available pods, sorted by ordinal, and finds a pod's
// index from its ordinal.
type podSet struct {
	ordinals []int
	keys     []uint64 // podKey of each pod, aligned with ordinals
	// dense maps ordinal to index+1 (0: not available) when the ordinals are
	// small enough for a slice; sparse is used otherwise.
	dense  []int32
	sparse map[int]int32
}

// newPodSet ignores negative ordinals and duplicates.
func newPodSet(pods []int) podSet {
	ordinals := make([]int, 0, len(pods))
	for _, o := range pods {
		if o >= 0 {
			ordinals = append(ordinals, o)
		}
	}
	slices.Sort(ordinals)
	ordinals = slices.Compact(ordinals)

	s := podSet{ordinals: ordinals, keys: make([]uint64, len(ordinals))}
	for i, o := range ordinals {
		s.keys[i] = podKey(o)
	}
	if n := len(ordinals); n > 0 && ordinals[n-1] < 4*n+1024 {
		s.dense = make([]int32, ordinals[n-1]+1)
		for i, o := range ordinals {
			s.dense[o] = int32(i) + 1
		}
	} else {
		s.sparse = make(map[int]int32, n)
		for i, o := range ordinals {
			s.sparse[o] = int32(i)
		}
	}
	return s
}

func (s *podSet) len() int {
	return len(s.ordinals)
}

// index returns the index of the pod with this ordinal, if it is available.
func (s *podSet) index(ordinal int) (int32, bool) {
	if s.dense != nil {
		if ordinal < 0 || ordinal >= len(s.dense) || s.dense[ordinal] == 0 {
			return 0, false
		}
		return s.dense[ordinal] - 1, true
	}
	i, ok := s.sparse[ordinal]
	return i, ok
}
