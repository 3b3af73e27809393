package placement

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// weightOneGolden holds, for every scenario of weightOneDigests, the SHA-256
// of the JSON of the Result that Place gave before FillByWeight existed: it
// was written by weightOneDigests(Place) on a checkout of commit ca28cd6
// (`git archive ca28cd6`, this file copied in without the Fill line), one
// "name digest" line per scenario.
const weightOneGolden = "testdata/weight-one.golden"

// TestFillByWeightPlacesAFleetOfWeightOneAsPlaceDidBeforeIt compares
// FillByWeight, on fleets of weight 1, with the results of Place from before
// FillByWeight was written, kept as digests in testdata: a pin on today's
// behaviour that does not rely on FillByName staying unchanged.
func TestFillByWeightPlacesAFleetOfWeightOneAsPlaceDidBeforeIt(t *testing.T) {
	got := weightOneDigests(func(in Input) Result { in.Fill = FillByWeight; return Place(in) })
	f, err := os.Open(weightOneGolden)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]string{}
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		name, digest, ok := strings.Cut(scanner.Text(), " ")
		if !ok {
			t.Fatalf("bad golden line %q", scanner.Text())
		}
		want[name] = digest
	}
	if len(want) != len(got) {
		t.Fatalf("%d golden digests, %d scenarios", len(want), len(got))
	}
	for _, d := range got {
		if want[d.name] != d.digest {
			t.Errorf("%s: result differs from the placement before FillByWeight", d.name)
		}
	}
}

type scenarioDigest struct{ name, digest string }

// weightOneDigests places every scenario of weight 1 with place, feeding
// each result of a sequence back as the next current assignment, and returns
// the digest of every result. The scenarios depend on nothing but this file,
// so that the same file generates the golden digests on an older commit.
func weightOneDigests(place func(Input) Result) []scenarioDigest {
	var out []scenarioDigest
	digest := func(name string, r Result) {
		b, err := json.Marshal(r)
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(b)
		out = append(out, scenarioDigest{name, hex.EncodeToString(sum[:])})
	}
	// 2,000 targets scaled from 1 pod to 12 and back, capacity automatic, then fixed.
	targets := make([]Target, 2_000)
	for i := range targets {
		targets[i] = Target{Name: fmt.Sprintf("dc%02d/router-%05d", i%17, (i*7919)%2_000)}
	}
	for _, capacity := range []int{0, 300} {
		in := Input{Targets: targets, PodCapacity: capacity}
		for step, pods := range []int{1, 2, 3, 5, 8, 12, 11, 7, 4, 1} {
			in.Pods = make([]int, pods)
			for o := range in.Pods {
				in.Pods[o] = o
			}
			r := place(in)
			digest(fmt.Sprintf("scale/capacity-%d/step-%02d", capacity, step), r)
			in.Current = r.Assignments
		}
	}
	// 400 small inputs: any pods, current and last pods, gone pods, deleted targets.
	rng := rand.New(rand.NewPCG(31, 41))
	for i := range 400 {
		in := Input{Current: map[string]int{}, Last: map[string]int{}}
		for o := range 10 {
			if rng.IntN(3) > 0 {
				in.Pods = append(in.Pods, o)
			}
		}
		if rng.IntN(2) == 0 {
			in.PodCapacity = 1 + rng.IntN(12)
		}
		for j := range rng.IntN(50) {
			name := fmt.Sprintf("ns%d/t%d", rng.IntN(3), j)
			in.Targets = append(in.Targets, Target{Name: name})
			if rng.IntN(10) < 7 {
				in.Current[name] = rng.IntN(12)
			}
			if rng.IntN(5) == 0 {
				in.Last[name] = rng.IntN(12)
			}
		}
		in.Current["deleted"] = rng.IntN(4)
		digest(fmt.Sprintf("random/%03d", i), place(in))
	}
	return out
}
