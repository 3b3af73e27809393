package plan

import (
	"encoding/json"
	"io"

	"github.com/gnmic-operator/gnmic-operator/internal/placement"
)

// answer is the output document. Lists are never null.
type answer struct {
	Capacity        int            `json:"capacity"`
	Assignments     map[string]int `json:"assignments"`
	Unassigned      []string       `json:"unassigned"`
	Oversized       []string       `json:"oversized"`
	Load            []int          `json:"load"`
	Moves           []move         `json:"moves"`
	LowerBoundMoves int            `json:"lowerBoundMoves"`
}

type move struct {
	Target string `json:"target"`
	From   int    `json:"from"`
	To     int    `json:"to"` // -1: the target is left without a pod
}

func newAnswer(r placement.Result, pods int) answer {
	a := answer{
		Capacity:        r.Capacity,
		Assignments:     r.Assignments,
		Unassigned:      r.Unassigned,
		Oversized:       r.Oversized,
		Load:            make([]int, pods),
		Moves:           make([]move, len(r.Moves)),
		LowerBoundMoves: r.LowerBoundMoves,
	}
	for ordinal := range a.Load {
		a.Load[ordinal] = r.Load[ordinal]
	}
	for i, m := range r.Moves {
		a.Moves[i] = move{Target: m.Target, From: m.From, To: m.To}
	}
	return a
}

func writeJSON(w io.Writer, a answer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(a)
}
