package shard

import (
	"hash/fnv"
	"slices"
)

// gamma is SplitMix64's increment, the golden ratio scaled to 64 bits.
const gamma = 0x9E3779B97F4A7C15

// memberHash is probe number probe of the 31-bit hash of a member's identity:
// the FNV-1a hash of the identity, advanced by probe SplitMix64 steps and
// finished with SplitMix64's output function, of which the top 31 bits are
// kept. Placement scores a Cluster against a member through this number, so
// it is part of the package's contract, pinned by a golden test: changing it
// changes which member every Cluster prefers.
func memberHash(identity string, probe int) int {
	h := fnv.New64a()
	h.Write([]byte(identity))
	z := h.Sum64() + uint64(probe)*gamma
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	z ^= z >> 31
	return int(z >> 33)
}

// ordinals gives every identity its own non-negative placement ordinal.
//
// Each identity walks its probe sequence hash(identity, 0), hash(identity, 1),
// ... and takes the first number no identity before it took. Live members go
// first, in identity order, then the gone owners, in identity order, so that
// a gone owner never displaces a live member and the same sets give the same
// ordinals whatever their order. Without a collision (two identities among a
// few hundred share a 31-bit hash about once in ten million fleets) every
// identity keeps hash(identity, 0) whoever else is present; with one, the
// identity that sorts later takes its next probe.
//
// live and gone must each be sorted and free of duplicates, and disjoint.
func ordinals(live, gone []string, hash func(identity string, probe int) int) (byIdentity map[string]int, byOrdinal map[int]string) {
	byIdentity = make(map[string]int, len(live)+len(gone))
	byOrdinal = make(map[int]string, len(live)+len(gone))
	for _, identity := range slices.Concat(live, gone) {
		for probe := 0; ; probe++ {
			o := hash(identity, probe)
			if _, taken := byOrdinal[o]; !taken {
				byIdentity[identity], byOrdinal[o] = o, identity
				break
			}
		}
	}
	return byIdentity, byOrdinal
}
