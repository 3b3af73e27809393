package balance

import (
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"
)

// FuzzBalance balances inputs built from arbitrary bytes, valid or not. Bad
// input must give Validate's error and an empty Result; good input must keep
// every guarantee, agree with the priority reference, and give the same
// result with its targets reversed. The seed corpus is in
// testdata/fuzz/FuzzBalance.
func FuzzBalance(f *testing.F) {
	f.Add(uint32(5), uint8(0), []byte("\x00\x00\x03\x01\x00\x00\x00\x00\x01\x00\xf0\x01\x00\x00\x00\x01"))
	f.Add(uint32(9), uint8(fuzzProportional), []byte("\x00\x00\x04\x02\x00\x00\x00\xff\x01\x00\xf0\x01\x00\x00\x00\xff"))
	f.Fuzz(func(t *testing.T, replicas uint32, flags uint8, data []byte) {
		if len(data) > 8*maxFuzzTargets {
			return // bytes past the last target change nothing; longer inputs only slow minimizing
		}
		in := fuzzInput(replicas, flags, data)
		r, err := Balance(in)
		if invalid := in.Validate(); invalid != nil {
			if err == nil || err.Error() != invalid.Error() || !reflect.DeepEqual(r, Result{}) {
				t.Fatalf("Validate says %v, Balance gave %v and %+v\ninput: %s", invalid, err, r, describe(in))
			}
			return
		}
		if err != nil {
			t.Fatalf("Balance: %v\ninput: %s", err, describe(in))
		}
		if err := checkInvariants(in, r); err != nil {
			t.Fatalf("invariant broken: %v\ninput: %s\nresult: %+v", err, describe(in), r)
		}
		if in.Policy == Priority && in.Replicas <= 10_000 {
			base, desired := referencePriority(in)
			if !maps.Equal(counts(r, true), base) || !maps.Equal(counts(r, false), desired) {
				t.Fatalf("Balance and the reference disagree\ninput: %s\nresult: %+v\nreference base %v, desired %v", describe(in), r, base, desired)
			}
		}
		reversed := in
		reversed.Targets = slices.Clone(in.Targets)
		slices.Reverse(reversed.Targets)
		if got, _ := Balance(reversed); !reflect.DeepEqual(got, r) {
			t.Fatalf("reversed targets balanced differently\ninput: %s", describe(in))
		}
	})
}

const maxFuzzTargets = 12

// The bits of FuzzBalance's flags.
const (
	fuzzProportional  = 1 << iota // the proportional policy instead of priority
	fuzzFallback                  // a startup timeout of one minute
	fuzzLarge                     // counts up to and past MaxReplicas
	fuzzLenient                   // negative counts and a max below the min
	fuzzUnknownOrder              // an order naming a target that does not exist
	fuzzUnknownPolicy             // a policy that does not exist
)

// fuzzInput reads one target from every 8 bytes of data: a name out of 24,
// its min, its max (none from 240), its proportion, started and not-started
// pods, how many seconds the oldest has waited, and its place in the order
// (not listed from 128).
func fuzzInput(replicas uint32, flags uint8, data []byte) Input {
	count := func(b byte) int {
		switch {
		case flags&fuzzLenient != 0 && b >= 250:
			return 249 - int(b)
		case flags&fuzzLarge != 0:
			return int(b) * 8_500_000 // 253 and above are more than MaxReplicas
		default:
			return int(b) % 16
		}
	}
	in := Input{Policy: Priority, Replicas: int(replicas % 64)}
	if flags&fuzzLarge != 0 {
		in.Replicas = int(replicas % (MaxReplicas + 2))
	}
	if flags&fuzzLenient != 0 && replicas>>31 != 0 {
		in.Replicas = -int(replicas % 5)
	}
	if flags&fuzzProportional != 0 {
		in.Policy = Proportional
	}
	if flags&fuzzUnknownPolicy != 0 {
		in.Policy = "even"
	}
	if flags&fuzzFallback != 0 {
		in.StartupTimeout = time.Minute
	}
	type listed struct {
		place byte
		name  string
	}
	var order []listed
	for i := 0; i+7 < len(data) && len(in.Targets) < maxFuzzTargets; i += 8 {
		b := data[i : i+8]
		t := Target{
			Name:       string(rune('a' + b[0]%24)),
			Min:        count(b[1]),
			Proportion: count(b[3]) % 6,
			Started:    count(b[4]),
			NotStarted: count(b[5]),
			Waiting:    time.Duration(b[6]) * time.Second,
		}
		if flags&fuzzLarge != 0 {
			t.Proportion = count(b[3])
		}
		switch {
		case b[2] >= 240:
		case flags&fuzzLenient != 0 && b[2]%7 == 0:
			t.Max = new(count(b[2]))
		default:
			t.Max = new(t.Min + count(b[2]))
		}
		in.Targets = append(in.Targets, t)
		if b[7] < 128 {
			order = append(order, listed{b[7], t.Name})
		}
	}
	slices.SortStableFunc(order, func(a, b listed) int { return int(a.place) - int(b.place) })
	for _, l := range order {
		in.Order = append(in.Order, l.name)
	}
	if flags&fuzzUnknownOrder != 0 {
		in.Order = append(in.Order, "unknown")
	}
	return in
}
