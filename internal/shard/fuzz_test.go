package shard

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// FuzzAssign assigns inputs built from arbitrary bytes and checks every
// guarantee of an Assignment, that order does not matter, that an Assignment
// fed back moves nothing, and that with unit costs the moves are exactly the
// lower bound. The seed corpus runs under plain go test.
func FuzzAssign(f *testing.F) {
	f.Add(uint16(0b111), false, []byte("\x00\x05\x01\x01\x07\x02\x02\x09\x03"))
	f.Add(uint16(0b11000000), true, []byte("\x00\x00\x06\x01\x00\x07\x02\x00\x08\x03\x00\x09"))
	f.Add(uint16(0), false, []byte("\x00\x10\x01\x01\x20\x0a"))
	f.Add(uint16(0xffff), true, []byte("\x05\xff\x00\x05\x01\x01\x06\x80\x0b\x07\x7f\x02"))
	f.Fuzz(func(t *testing.T, memberMask uint16, unitCost bool, data []byte) {
		if len(data) > 3*maxFuzzClusters {
			return // bytes past the last Cluster change nothing
		}
		in := fuzzAssignInput(memberMask, unitCost, data)
		a := Assign(in)
		if err := checkAssignment(in, a); err != nil {
			t.Fatalf("%v\ninput: %+v\nassignment: %+v", err, in, a)
		}
		if unitCost && len(a.Moves) != a.LowerBoundMoves {
			t.Fatalf("unit costs: %d moves, lower bound %d\ninput: %+v", len(a.Moves), a.LowerBoundMoves, in)
		}
		reversed := in
		reversed.Members = slices.Clone(in.Members)
		reversed.Clusters = slices.Clone(in.Clusters)
		slices.Reverse(reversed.Members)
		slices.Reverse(reversed.Clusters)
		if got := Assign(reversed); !reflect.DeepEqual(got, a) {
			t.Fatalf("reversed input assigned differently\ninput: %+v", in)
		}
		again := in
		again.Owners = a.Owners
		if got := Assign(again); len(got.Moves) != 0 {
			t.Fatalf("assigning an assignment again moved %v\ninput: %+v", got.Moves, in)
		}
	})
}

const maxFuzzClusters = 200

// fuzzIdentities are the members a fuzz input can name: bit i of the member
// mask makes identity i a member, and owners name any of them, "" or one that
// is never a member. Two of them share a 31-bit hash.
var fuzzIdentities = []string{
	"gnmic-operator-6d4b9c7f8-x2k4q", "gnmic-operator-6d4b9c7f8-7hn2c", "gnmic-operator-6d4b9c7f8-qm5tw",
	"gnmic-operator-6d4b9c7f8-b9zkd", "gnmic-operator-6d4b9c7f8-l4vrp", "gnmic-operator-6d4b9c7f8-s8gfn",
	colliding[0], colliding[1], "", "gnmic-operator-5f7c8d9b4-gone1", "gnmic-operator-5f7c8d9b4-gone2",
}

// fuzzAssignInput reads one Cluster from every 3 bytes of data: a key out of
// 64, a cost (1 with unitCost, otherwise the byte as a signed number times
// 8200, from below 1 to above placement.MaxWeight), and a recorded owner, or
// none.
func fuzzAssignInput(memberMask uint16, unitCost bool, data []byte) AssignInput {
	in := AssignInput{Owners: map[string]string{}}
	for i, id := range fuzzIdentities {
		if memberMask&(1<<i) != 0 {
			in.Members = append(in.Members, id)
		}
	}
	for i := 0; i+2 < len(data) && len(in.Clusters) < maxFuzzClusters; i += 3 {
		c := Cluster{Key: fmt.Sprintf("ns%d/c%d", data[i]%3, data[i]%64), Cost: 1}
		if !unitCost {
			c.Cost = int(int8(data[i+1])) * 8200
		}
		in.Clusters = append(in.Clusters, c)
		if o := int(data[i+2]); o < 2*len(fuzzIdentities) {
			in.Owners[c.Key] = fuzzIdentities[o%len(fuzzIdentities)]
		}
	}
	return in
}
