package placement

import (
	"cmp"
	"slices"
	"strings"
)

// sortByName orders the given target indexes, in place, by the targets'
// names, as slices.SortFunc with strings.Compare would, but faster on the long
// shared prefixes that real names have ("namespace/router-0001", ...).
// Targets with the same name end up next to each other in no particular
// order.
//
// It is a most-significant-digit radix sort whose digits are 8 bytes of the
// name: targets are sorted on their first 8 bytes with an LSD radix sort of
// that 64-bit digit, and each run that ties is sorted the same way on its
// next 8 bytes. Small runs fall back to comparing names.
//
// Reading a name is a cache miss, so the first pass reads each name once and
// keeps what later passes need: the first two digits and the length. The
// items hold no pointers, so that moving them costs the garbage collector
// nothing.
func sortByName(indexes []int32, targets []Target) {
	items := make([]nameItem, len(indexes))
	for i, index := range indexes {
		name := targets[index].Name
		items[i] = nameItem{digit: nameDigit(name, 0), second: nameDigit(name, 8), index: index, length: int32(min(len(name), 1<<31-1))}
	}
	s := nameSorter{targets: targets, scratch: make([]nameItem, len(items))}
	s.sortDigits(items, 0)
	for i := range items {
		indexes[i] = items[i].index
	}
}

// nameItem is a target's index with the 8 bytes of its name being sorted on.
type nameItem struct {
	digit  uint64 // the 8 bytes being sorted on
	second uint64 // bytes 8 to 15, the digit after the first
	index  int32
	length int32 // the name's length, capped
}

type nameSorter struct {
	targets []Target
	scratch []nameItem
}

func (s *nameSorter) name(item nameItem) string {
	return s.targets[item.index].Name
}

// smallRun is the run length below which comparing names is cheaper.
const smallRun = 32

// nameDigit is the 8 bytes of name from depth on, big-endian, padded with
// zero bytes past the end of the name.
func nameDigit(name string, depth int) uint64 {
	if depth+8 <= len(name) {
		b := name[depth : depth+8]
		return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
			uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
	}
	var d uint64
	for i := range 8 {
		d <<= 8
		if depth+i < len(name) {
			d |= uint64(name[depth+i])
		}
	}
	return d
}

// sortDigits sorts items whose names agree on their first depth bytes.
func (s *nameSorter) sortDigits(items []nameItem, depth int) {
	if len(items) <= smallRun {
		// The digits order names as the names do, as all agree on their first
		// depth bytes; only equal digits need the names themselves.
		slices.SortFunc(items, func(a, b nameItem) int {
			if a.digit != b.digit {
				return cmp.Compare(a.digit, b.digit)
			}
			return strings.Compare(s.name(a), s.name(b))
		})
		return
	}
	radixSort(items, s.scratch[:len(items)])
	for start := 0; start < len(items); {
		end := start + 1
		for end < len(items) && items[end].digit == items[start].digit {
			end++
		}
		if end-start > 1 {
			s.sortTie(items[start:end], depth+8)
		}
		start = end
	}
}

// sortTie sorts items whose names agree on their first next bytes, once
// zero-padded. A name no longer than next is then a prefix of every longer
// one, so those come first, shortest first; the rest go on to the next digit.
func (s *nameSorter) sortTie(run []nameItem, next int) {
	ended := 0
	for i := range run {
		if int(run[i].length) <= next {
			run[ended], run[i] = run[i], run[ended]
			ended++
		}
	}
	slices.SortFunc(run[:ended], func(a, b nameItem) int { return cmp.Compare(a.length, b.length) })
	rest := run[ended:]
	for i := range rest {
		if next == 8 {
			rest[i].digit = rest[i].second
		} else {
			rest[i].digit = nameDigit(s.name(rest[i]), next)
		}
	}
	if len(rest) > 1 {
		s.sortDigits(rest, next)
	}
}

// radixSort sorts items by digit, least significant byte first. It only
// counts and moves the bytes on which the items differ: names share most of
// their bytes, and counting a byte that every item shares is the slow part of
// a radix sort, as every item then increments the same counter.
func radixSort(items, scratch []nameItem) {
	var differ uint64
	for i := range items {
		differ |= items[i].digit ^ items[0].digit
	}
	src, dst := items, scratch
	for shift := uint(0); shift < 64; shift += 8 {
		if byte(differ>>shift) == 0 {
			continue
		}
		var counts [256]int32
		for i := range src {
			counts[byte(src[i].digit>>shift)]++
		}
		var sum int32
		for v := range counts {
			counts[v], sum = sum, sum+counts[v]
		}
		for i := range src {
			v := byte(src[i].digit >> shift)
			dst[counts[v]] = src[i]
			counts[v]++
		}
		src, dst = dst, src
	}
	if &src[0] != &items[0] {
		copy(items, src)
	}
}
