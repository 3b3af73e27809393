package placement

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
)

func TestScoreMatchesThePinnedValues(t *testing.T) {
	f, err := os.Open("testdata/scores.golden")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	checked := 0
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line := scanner.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 3 {
			t.Fatalf("malformed golden line %q", line)
		}
		name, err := strconv.Unquote(fields[0])
		if err != nil {
			t.Fatalf("golden line %q: %v", line, err)
		}
		ordinal, err := strconv.Atoi(fields[1])
		if err != nil {
			t.Fatalf("golden line %q: %v", line, err)
		}
		want, err := strconv.ParseUint(fields[2], 16, 64)
		if err != nil {
			t.Fatalf("golden line %q: %v", line, err)
		}
		if got := Score(name, ordinal); got != want {
			t.Errorf("Score(%q, %d) = %016x, pinned %016x: changing the score reshuffles every fleet", name, ordinal, got, want)
		}
		checked++
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d pinned values checked", checked)
	}
}

// TestScoreIsTheSplitMix64SequenceSeededWithXXH64 checks the documented
// definition against a plain SplitMix64 generator.
func TestScoreIsTheSplitMix64SequenceSeededWithXXH64(t *testing.T) {
	if got := xxhash.Sum64String(""); got != 0xef46db3751d8e999 {
		t.Fatalf("XXH64 of the empty string is %016x, want the reference ef46db3751d8e999", got)
	}
	for _, name := range []string{"", "ns/router1", "dc1/leaf-042"} {
		state := xxhash.Sum64String(name)
		for ordinal := range 64 {
			state += 0x9E3779B97F4A7C15
			z := state
			z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
			z = (z ^ (z >> 27)) * 0x94D049BB133111EB
			z ^= z >> 31
			if got := Score(name, ordinal); got != z {
				t.Fatalf("Score(%q, %d) = %016x, SplitMix64 output %d is %016x", name, ordinal, got, ordinal+1, z)
			}
		}
	}
}
