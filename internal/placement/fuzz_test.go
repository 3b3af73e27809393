package placement

import (
	"fmt"
	"reflect"
	"testing"
)

// FuzzPlace places inputs built from arbitrary bytes, valid or not, and
// checks every guarantee, agreement with the reference, and that order does
// not matter. The seed corpus is in testdata/fuzz/FuzzPlace.
func FuzzPlace(f *testing.F) {
	f.Add(uint16(0b111), int16(0), []byte("\x00\x01\x00\x01\x01\x01\x02\x01\x80"))
	f.Fuzz(func(t *testing.T, podMask uint16, podCapacity int16, data []byte) {
		if len(data) > 3*maxFuzzTargets {
			return // bytes past the last target change nothing; longer inputs only slow minimizing
		}
		in := fuzzInput(podMask, podCapacity, data)
		r := Place(in)
		if err := checkInvariants(in, r); err != nil {
			t.Fatalf("invariant broken: %v\ninput: %s", err, describe(in))
		}
		if ref := referencePlace(in); !reflect.DeepEqual(r, ref) {
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
	})
}

const maxFuzzTargets = 200

// fuzzInput reads pods from a bit mask (bit i: ordinal i is available) and
// one target from every 3 bytes of data: a name out of 48, a weight from -7
// to 7, and a current ordinal from -2 to 17, or none.
func fuzzInput(podMask uint16, podCapacity int16, data []byte) Input {
	in := Input{PodCapacity: int(podCapacity % 64), Current: map[string]int{}}
	for o := range 16 {
		if podMask&(1<<o) != 0 {
			in.Pods = append(in.Pods, o)
		}
	}
	for i := 0; i+2 < len(data) && len(in.Targets) < maxFuzzTargets; i += 3 {
		name := fmt.Sprintf("ns/t%d", data[i]%48)
		in.Targets = append(in.Targets, Target{Name: name, Weight: int(int8(data[i+1])) % 8})
		if c := int(data[i+2]); c < 240 {
			in.Current[name] = c%20 - 2
		}
	}
	return in
}
