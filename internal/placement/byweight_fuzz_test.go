package placement

import (
	"fmt"
	"reflect"
	"testing"
)

// FuzzPlaceByWeight places inputs built from arbitrary bytes, valid or not,
// with FillByWeight, and checks every guarantee of that fill, agreement with
// its reference, that order does not matter, and that a fleet of weight 1
// places as FillByName does. The seed corpus is in
// testdata/fuzz/FuzzPlaceByWeight.
func FuzzPlaceByWeight(f *testing.F) {
	f.Add(uint16(0b111), int16(0), []byte("\x00\x40\x00\xff\x01\x01\x00\xff\x02\x01\x01\xff\x03\x01\x02\xff\x04\x02\xf0\xff"))
	f.Fuzz(func(t *testing.T, podMask uint16, podCapacity int16, data []byte) {
		if len(data) > 4*maxFuzzTargets {
			return // bytes past the last target change nothing; longer inputs only slow minimizing
		}
		in := fuzzInputByWeight(podMask, podCapacity, data)
		r := Place(in)
		if err := checkInvariantsByWeight(in, r); err != nil {
			t.Fatalf("invariant broken: %v\ninput: %s", err, describe(in))
		}
		if ref := referencePlaceByWeight(in); !reflect.DeepEqual(r, ref) {
			t.Fatalf("Place and the reference disagree\ninput: %s\nPlace:     %+v\nreference: %+v", describe(in), r, ref)
		}
		reversed := in
		reversed.Targets = make([]Target, len(in.Targets))
		for i, tg := range in.Targets {
			reversed.Targets[len(in.Targets)-1-i] = tg
		}
		if got := Place(reversed); !reflect.DeepEqual(got, r) {
			t.Fatalf("reversed targets placed differently\ninput: %s", describe(in))
		}
		if normalize(in).allWeightOne() {
			byName := in
			byName.Fill = FillByName
			if got := Place(byName); !reflect.DeepEqual(got, r) {
				t.Fatalf("every weight 1, FillByWeight differs from FillByName\ninput: %s\nByWeight: %+v\nByName:   %+v", describe(in), r, got)
			}
		}
	})
}

// fuzzInputByWeight reads pods from a bit mask (bit i: ordinal i is
// available) and one target from every 4 bytes of data: a name out of 48, a
// weight from -128 to 127 (0 means 1, below 0 is read leniently), a current
// ordinal from -2 to 17 or none, and a last ordinal from -1 to 15 or none.
func fuzzInputByWeight(podMask uint16, podCapacity int16, data []byte) Input {
	in := Input{PodCapacity: int(podCapacity % 512), Current: map[string]int{}, Last: map[string]int{}, Fill: FillByWeight}
	for o := range 16 {
		if podMask&(1<<o) != 0 {
			in.Pods = append(in.Pods, o)
		}
	}
	for i := 0; i+3 < len(data) && len(in.Targets) < maxFuzzTargets; i += 4 {
		name := fmt.Sprintf("ns/t%d", data[i]%48)
		in.Targets = append(in.Targets, Target{Name: name, Weight: int(int8(data[i+1]))})
		if c := int(data[i+2]); c < 240 {
			in.Current[name] = c%20 - 2
		}
		if l := int(data[i+3]); l < 68 {
			in.Last[name] = l%17 - 1
		}
	}
	return in
}
