package placement

// weighed is a weight with the position of what weighs it.
type weighed struct {
	weight int32
	at     int32
}

// sortHeaviestFirst sorts items by descending weight, keeping the order of
// items of equal weight (a stable LSD radix sort on the 20 bits a weight up to
// MaxWeight needs, skipping the bytes on which all items agree). scratch
// holds at least len(items).
func sortHeaviestFirst(items, scratch []weighed) {
	if len(items) < 2 {
		return
	}
	key := func(w weighed) uint32 { return uint32(MaxWeight - w.weight) }
	var differ uint32
	for i := range items {
		differ |= key(items[i]) ^ key(items[0])
	}
	src, dst := items, scratch[:len(items)]
	for shift := uint(0); shift < 32; shift += 8 {
		if byte(differ>>shift) == 0 {
			continue
		}
		var counts [256]int32
		for i := range src {
			counts[byte(key(src[i])>>shift)]++
		}
		var sum int32
		for v := range counts {
			counts[v], sum = sum, sum+counts[v]
		}
		for i := range src {
			v := byte(key(src[i]) >> shift)
			dst[counts[v]] = src[i]
			counts[v]++
		}
		src, dst = dst, src
	}
	if &src[0] != &items[0] {
		copy(items, src)
	}
}
