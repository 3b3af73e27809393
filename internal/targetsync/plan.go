package targetsync

import (
	"fmt"
	"maps"
	"sort"
)

// Desired is a Target as the inventory maps it.
type Desired struct {
	Name    string
	Address string
	Profile string
	Labels  map[string]string
	Tags    map[string]string
}

// Existing is a Target that exists in the TargetSource's namespace.
type Existing struct {
	Name string
	// Owned is true when this TargetSource is the Target's controller (owner reference with its UID), or when
	// the Target was handed to it (Handed).
	Owned bool
	// Handed is true when the Target has no controller and its owner annotation hands it to this TargetSource:
	// it is owned, and the next write (an update or a missing mark, never a delete first) gives it the
	// TargetSource's reference.
	Handed bool
	// What the Target is now (its labels without the TargetSource's own label).
	Address string
	Profile string
	Labels  map[string]string
	Tags    map[string]string
	// MissingSince is the sync the Target's device was first missing from; 0 when it is not missing.
	MissingSince int64
}

// Input is one sync.
type Input struct {
	// Desired are the Targets the inventory maps to, one per name.
	Desired []Desired
	// Existing are the Targets of the namespace, owned or not.
	Existing []Existing
	// Sync is the number of this sync: the successful syncs before it, plus one.
	Sync int64
	// DeleteAfterMisses is how many syncs in a row a device must be missing from before its Target is deleted
	// (at least 1).
	DeleteAfterMisses int64
	// Guard judges whether the answer is truncated.
	Guard Guard
}

// Guard is what the truncation guard compares.
type Guard struct {
	// Records in this answer.
	Records int
	// Announced is how many records the inventory said it holds; -1 when it did not say.
	Announced int
	// LastRecords of the last successful sync; 0 when there was none.
	LastRecords int
	// MinPercent: an answer with fewer than this percentage of LastRecords is truncated; 0 turns it off.
	MinPercent int
}

// Truncated says whether an answer looks truncated, and why.
func (g Guard) Truncated() (bool, string) {
	if g.Announced >= 0 && g.Records < g.Announced {
		return true, fmt.Sprintf("the inventory announced %d records and sent %d", g.Announced, g.Records)
	}
	if g.MinPercent > 0 && g.LastRecords > 0 && g.Records*100 < g.LastRecords*g.MinPercent {
		return true, fmt.Sprintf("%d records, fewer than %d%% of the last sync's %d (sync.minRecordsPercent)",
			g.Records, g.MinPercent, g.LastRecords)
	}
	return false, ""
}

// Plan is what one sync writes, and what it found.
type Plan struct {
	// Truncated is why the answer was taken as truncated; the plan is then empty.
	Truncated string

	// Create are Targets to create.
	Create []Desired
	// Update are owned Targets to rewrite as desired (which also clears a missing mark).
	Update []Desired
	// Mark are owned Targets whose device went missing at this sync: they get the mark Sync.
	Mark []string
	// Delete are owned Targets whose device has been missing from DeleteAfterMisses syncs.
	Delete []string

	// Conflicts are desired names held by Targets this TargetSource does not own, sorted.
	Conflicts []string
	// Unchanged counts owned Targets that are as desired.
	Unchanged int
	// Missing counts owned Targets missing from this sync that stay (marked, not deleted).
	Missing int
	// Owned counts the owned Targets after the plan is written.
	Owned int
}

// Writes is the number of API writes the plan takes.
func (p Plan) Writes() int { return len(p.Create) + len(p.Update) + len(p.Mark) + len(p.Delete) }

// PlanSync decides one sync. Every list of the plan is sorted by name.
func PlanSync(in Input) Plan {
	if truncated, why := in.Guard.Truncated(); truncated {
		return Plan{Truncated: why}
	}
	misses := max(in.DeleteAfterMisses, 1)
	existing := make(map[string]*Existing, len(in.Existing))
	for i := range in.Existing {
		existing[in.Existing[i].Name] = &in.Existing[i]
	}
	var p Plan
	desired := make(map[string]bool, len(in.Desired))
	for _, d := range in.Desired {
		desired[d.Name] = true
		e, ok := existing[d.Name]
		switch {
		case !ok:
			p.Create = append(p.Create, d)
			p.Owned++
		case !e.Owned:
			p.Conflicts = append(p.Conflicts, d.Name)
		case e.MissingSince != 0 || e.Handed || !same(d, e):
			p.Update = append(p.Update, d)
			p.Owned++
		default:
			p.Unchanged++
			p.Owned++
		}
	}
	for _, e := range in.Existing {
		if !e.Owned || desired[e.Name] {
			continue
		}
		since := e.MissingSince
		if since == 0 || since > in.Sync {
			since = in.Sync
		}
		switch {
		case e.Handed:
			// Only a Target the TargetSource controls may be deleted: it takes it first.
			p.Mark = append(p.Mark, e.Name)
			p.Missing++
			p.Owned++
		case in.Sync-since+1 >= misses:
			p.Delete = append(p.Delete, e.Name)
		case since != e.MissingSince:
			p.Mark = append(p.Mark, e.Name)
			p.Missing++
			p.Owned++
		default:
			p.Missing++
			p.Owned++
		}
	}
	byName := func(ds []Desired) { sort.Slice(ds, func(i, j int) bool { return ds[i].Name < ds[j].Name }) }
	byName(p.Create)
	byName(p.Update)
	sort.Strings(p.Mark)
	sort.Strings(p.Delete)
	sort.Strings(p.Conflicts)
	return p
}

// same is true when the Target is what the inventory says it should be.
func same(d Desired, e *Existing) bool {
	return d.Address == e.Address && d.Profile == e.Profile && equalMaps(d.Labels, e.Labels) && equalMaps(d.Tags, e.Tags)
}

// equalMaps treats nil and empty alike.
func equalMaps(a, b map[string]string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return maps.Equal(a, b)
}
