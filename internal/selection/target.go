package selection

import (
	"encoding/binary"
	"fmt"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// TargetPick is what the enabled Pipelines of a Cluster do with one Target.
// It depends only on the Target's name and labels (and the Prepared that made
// it), never on its spec or on other Targets.
type TargetPick struct {
	// Selected reports whether the Target is in the Selection: a Pipeline that
	// selects subscriptions picks it.
	Selected bool
	// Target is the Target with what its Pipelines apply to it, as it appears
	// in Selection.Targets when Selected. Its slices and map are shared and
	// read-only.
	Target SelectedTarget
	// Pipelines are the names of the Pipelines that pick the Target, by
	// reference or by selector, in name order; those without subscriptions
	// included, although they skip it.
	Pipelines []string
	// Problems are the problems the Target causes: Pipelines that pick it and
	// set a label differently, Pipelines that pick it without subscriptions.
	// Shared and read-only.
	Problems []string
	// referenced reports whether a Pipeline's targetRefs names the Target, so
	// that the reference is not missing.
	referenced bool
}

// Same tells whether a and b were made by one Prepared (or one of the same Key) for the same picking Pipelines,
// and so are equal but for the Target they carry: their slices and map are the same ones. Equal picks made by
// Prepareds of different Keys are not the same.
func (a TargetPick) Same(b TargetPick) bool {
	return a.Selected == b.Selected && a.referenced == b.referenced && len(a.Pipelines) == len(b.Pipelines) &&
		(len(a.Pipelines) == 0 || &a.Pipelines[0] == &b.Pipelines[0])
}

// targetChooser is how one pipeline picks targets and what it applies to them.
type targetChooser struct {
	name      string
	refs      map[string]bool
	selectors []labels.Selector
	// subscriptions and outputs are what the pipeline selects, sorted; a
	// pipeline without subscriptions skips its targets.
	subscriptions, outputs []string
	labels                 map[string]string
	labelKeys              []string
}

// matches reports whether a selector of the pipeline matches targetLabels.
func (c *targetChooser) matches(targetLabels map[string]string) bool {
	set := labels.Set(targetLabels)
	for _, sel := range c.selectors {
		if sel.Matches(set) {
			return true
		}
	}
	return false
}

// combination is what one set of pipelines applies to the targets they all
// pick, and nothing else picks: the same for each of those targets, so it is
// worked out once.
type combination struct {
	selected      bool
	pipelines     []string
	subscriptions []string
	outputs       []string
	labels        map[string]string
	problems      []string
}

// Target returns what the Prepared's Pipelines do with t. The pick depends on
// t's name and labels only: a caller may reuse it for any Target of the same
// name and labels, with the same Prepared (or one of the same Key).
func (p *Prepared) Target(t *v1alpha1.Target) TargetPick {
	var buf [32]byte
	indexes := buf[:0] // the picking pipelines, as uvarints
	pick := TargetPick{Target: SelectedTarget{Target: t}}
	for i := range p.pipelines {
		pl := &p.pipelines[i]
		referenced := pl.refs[t.Name]
		pick.referenced = pick.referenced || referenced
		if referenced || pl.matches(t.Labels) {
			indexes = binary.AppendUvarint(indexes, uint64(i))
		}
	}
	if len(indexes) == 0 {
		return pick
	}
	c := p.combination(indexes)
	pick.Selected, pick.Pipelines, pick.Problems = c.selected, c.pipelines, c.problems
	pick.Target.Subscriptions, pick.Target.Outputs, pick.Target.Labels = c.subscriptions, c.outputs, c.labels
	return pick
}

// combination returns the combination of the pipelines at indexes, working
// it out the first time. A Prepared keeps each combination it met, at most
// one per Target.
func (p *Prepared) combination(indexes []byte) *combination {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.combinations[string(indexes)]; ok {
		return c
	}
	c := &combination{}
	subscriptions, outputs := map[string]bool{}, map[string]bool{}
	labelSetBy := map[string]string{} // label key → pipeline that set it
	var labels map[string]string
	problems := map[string]bool{}
	for rest := indexes; len(rest) > 0; {
		i, n := binary.Uvarint(rest)
		rest = rest[n:]
		pl := &p.pipelines[i]
		c.pipelines = append(c.pipelines, pl.name)
		if len(pl.subscriptions) == 0 {
			problems[fmt.Sprintf("pipeline %q: selects targets but no subscription; a collector rejects a target without subscriptions, so this pipeline's targets are skipped", pl.name)] = true
			continue
		}
		c.selected = true
		addAll(subscriptions, pl.subscriptions)
		addAll(outputs, pl.outputs)
		for _, key := range pl.labelKeys {
			value := pl.labels[key]
			first, set := labelSetBy[key]
			if !set {
				if labels == nil {
					labels = map[string]string{}
				}
				labels[key], labelSetBy[key] = value, pl.name
				continue
			}
			if labels[key] != value {
				problems[fmt.Sprintf("pipelines %q and %q select the same targets and set label %q differently; %q wins", first, pl.name, key, first)] = true
			}
		}
	}
	c.subscriptions, c.outputs, c.labels = sortedSet(subscriptions), sortedSet(outputs), labels
	c.problems = sortedSet(problems)
	p.combinations[string(indexes)] = c
	return c
}
