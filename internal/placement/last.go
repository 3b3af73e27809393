package placement

// Lasts gives every target's last pod after this placement, the Last of the
// next one: the pod a target left, or was taken from, without choosing to,
// and goes back to once that pod is available again.
//
//   - A target that ends on a pod keeps its last pod (or, without one, its
//     current pod, when it moves) only while that pod is not available now
//     and comesBack says it will be, as a pod of the workload's current
//     size that is restarting or not ready yet. A target that ends on its
//     last pod, or could not go back to it because it was full, or whose
//     last pod is gone for good (scaled away) has none.
//   - A target that ends on no pod keeps its last pod, or its current pod
//     when it has none, whatever comesBack says: while a workload is scaled
//     to zero every pod is gone, and its targets must not forget where they
//     were.
//
// Only targets of the input have an entry, and only those with a last pod.
func Lasts(in Input, r Result, comesBack func(ordinal int) bool) map[string]int {
	available := make(map[int]bool, len(in.Pods))
	for _, o := range in.Pods {
		available[o] = true
	}
	lasts := map[string]int{}
	for _, t := range in.Targets {
		last, ok := in.Last[t.Name]
		if !ok || last < 0 {
			last, ok = in.Current[t.Name]
		}
		if !ok || last < 0 {
			continue
		}
		to, placed := r.Assignments[t.Name]
		switch {
		case !placed:
			lasts[t.Name] = last
		case to != last && !available[last] && comesBack(last):
			lasts[t.Name] = last
		}
	}
	return lasts
}
