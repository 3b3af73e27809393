package shard

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// colliding are two pod names whose 31-bit hashes are equal, found by a
// birthday search over 77,556 random names.
var colliding = [2]string{"gnmic-operator-6d4b9c7f8-8wpwj", "gnmic-operator-6d4b9c7f8-j4jbv"}

// TestMemberHashIsPinned pins the hash that turns an identity into a
// placement ordinal: changing it changes which member every Cluster prefers.
// The values were checked against an independent implementation of FNV-1a
// and SplitMix64.
func TestMemberHashIsPinned(t *testing.T) {
	golden := []struct {
		identity string
		probe    int
		want     int
	}{
		{"", 0, 2056588020},
		{"", 1, 1640021504},
		{"gnmic-operator-6d4b9c7f8-x2k4q", 0, 33620186},
		{"gnmic-operator-6d4b9c7f8-x2k4q", 1, 1013568337},
		{colliding[0], 0, 969240369},
		{colliding[0], 1, 489780045},
		{colliding[1], 0, 969240369},
		{colliding[1], 1, 315951461},
	}
	for _, g := range golden {
		if got := memberHash(g.identity, g.probe); got != g.want {
			t.Errorf("memberHash(%q, %d) = %d, want %d", g.identity, g.probe, got, g.want)
		}
	}
}

func TestMemberHashIsANonNegative31BitNumber(t *testing.T) {
	f := newFleet(1)
	for probe := range 1000 {
		if h := memberHash(f.member(), probe%4); h < 0 || h >= 1<<31 {
			t.Fatalf("memberHash out of range: %d", h)
		}
	}
}

func TestOrdinalsGiveCollidingIdentitiesTheirOwnOrdinals(t *testing.T) {
	byIdentity, byOrdinal := ordinals(colliding[:], nil, memberHash)
	if byIdentity[colliding[0]] != 969240369 {
		t.Errorf("the identity that sorts first lost its hash: got %d", byIdentity[colliding[0]])
	}
	if byIdentity[colliding[1]] != 315951461 {
		t.Errorf("the identity that sorts second did not take its next probe: got %d", byIdentity[colliding[1]])
	}
	if len(byOrdinal) != 2 {
		t.Errorf("colliding identities share an ordinal: %v", byIdentity)
	}
}

// crowdedHash collides all the time: identities of equal length share every
// probe but those of different lengths interleave.
func crowdedHash(identity string, probe int) int {
	return len(identity)%3 + probe
}

func TestOrdinalsAreDistinctAndDoNotDependOnOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for range 500 {
		var ids []string
		for range rng.IntN(12) {
			ids = append(ids, string(rune('a'+rng.IntN(20)))+strings.Repeat("x", rng.IntN(4)))
		}
		slices.Sort(ids)
		ids = slices.Compact(ids)
		split := 0
		if len(ids) > 0 {
			split = rng.IntN(len(ids) + 1)
		}
		live, gone := ids[:split], ids[split:]
		byIdentity, byOrdinal := ordinals(live, gone, crowdedHash)
		if len(byIdentity) != len(ids) || len(byOrdinal) != len(ids) {
			t.Fatalf("identities share ordinals: %v", byIdentity)
		}
		for o, id := range byOrdinal {
			if byIdentity[id] != o || o < 0 {
				t.Fatalf("maps disagree on %q: %v", id, byIdentity)
			}
		}
		again, _ := ordinals(slices.Clone(live), slices.Clone(gone), crowdedHash)
		if !reflect.DeepEqual(again, byIdentity) {
			t.Fatalf("same identities, other ordinals: %v and %v", byIdentity, again)
		}
	}
}

func TestOrdinalsLetLiveMembersGoBeforeGoneOwners(t *testing.T) {
	// "b" sorts after "a" but is live: it keeps probe 0, which "a" shares.
	byIdentity, _ := ordinals([]string{"b"}, []string{"a"}, func(_ string, probe int) int { return probe })
	if byIdentity["b"] != 0 || byIdentity["a"] != 1 {
		t.Errorf("a gone owner displaced a live member: %v", byIdentity)
	}
}
