package placement

import "github.com/cespare/xxhash/v2"

// gamma is SplitMix64's increment, the golden ratio scaled to 64 bits.
const gamma = 0x9E3779B97F4A7C15

// Score is the score of the target named name for the pod with the given
// ordinal; a target prefers the pods where its score is higher.
//
// It is the (ordinal+1)-th output of SplitMix64 seeded with the XXH64 hash
// (seed 0) of the name:
//
//	h = XXH64(name)
//	z = h + (ordinal+1) * 0x9E3779B97F4A7C15   (mod 2^64)
//	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
//	z = (z ^ z>>27) * 0x94D049BB133111EB
//	score = z ^ z>>31
//
// A score depends on the name and the ordinal only, never on other pods or
// targets. The function is part of the package's contract: see the package
// documentation before changing it.
func Score(name string, ordinal int) uint64 {
	return scoreHashed(hashName(name), podKey(ordinal))
}

// hashName is computed once per target, so that scoring it against a pod
// costs a few multiplications.
func hashName(name string) uint64 {
	return xxhash.Sum64String(name)
}

// podKey is computed once per pod.
func podKey(ordinal int) uint64 {
	return (uint64(ordinal) + 1) * gamma
}

// scoreHashed finishes Score from the target's hash and the pod's key with
// SplitMix64's output function.
func scoreHashed(hash, key uint64) uint64 {
	z := hash + key
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}
