package cluster

import (
	"encoding/json"
	"maps"
	"reflect"
	"strings"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// targetStatePatch is the JSON merge patch (RFC 7386) of a Target's status that sets cluster's entry to
// state, or removes it with nil, and sets the printer columns (status.clusters, status.state) that follow.
// It locks on the listed Target's resourceVersion: the API server refuses it with a conflict once the
// Target changed since it was listed, and writes nothing.
//
// It carries only what changes. Under the lock the server holds the listed status, so a field of the entry
// that keeps its value is left out, and one that goes empty is sent as null (a merge patch merges objects:
// a field left out would keep its old value). An entry the Cluster no longer has is sent as null, and the
// whole map as null when no entry is left, as a patch of the whole Target would.
//
// The Target given may be the cache's own: it is only read.
func targetStatePatch(listed *operatorv1alpha1.Target, cluster string, state *operatorv1alpha1.TargetClusterState) ([]byte, error) {
	status := map[string]any{}
	old, had := listed.Status.ClusterStates[cluster]
	states := maps.Clone(listed.Status.ClusterStates)
	switch {
	case state == nil && !had:
	case state == nil && len(states) == 1:
		status["clusterStates"] = nil
		delete(states, cluster)
	case state == nil:
		status["clusterStates"] = map[string]any{cluster: nil}
		delete(states, cluster)
	default:
		status["clusterStates"] = map[string]any{cluster: entryChanges(old, *state)}
		if states == nil {
			states = map[string]operatorv1alpha1.TargetClusterState{}
		}
		states[cluster] = *state
	}
	clusters, worst := summarize(states)
	if clusters != listed.Status.Clusters {
		status["clusters"] = orNull(clusters)
	}
	if worst != listed.Status.State {
		status["state"] = orNull(worst)
	}
	patch := map[string]any{"metadata": map[string]any{"resourceVersion": listed.ResourceVersion}}
	if len(status) > 0 {
		patch["status"] = status
	}
	return json.Marshal(patch)
}

// entryChanges is the merge patch that turns the entry old into new: each field whose value differs, null
// for one that goes empty (an empty field is absent from the entry's JSON).
func entryChanges(old, new operatorv1alpha1.TargetClusterState) map[string]any {
	o, n := reflect.ValueOf(old), reflect.ValueOf(new)
	out := make(map[string]any, len(entryFields))
	for _, f := range entryFields {
		was, is := o.Field(f.index), n.Field(f.index)
		switch {
		case was.Equal(is):
		case is.IsZero():
			out[f.name] = nil
		default:
			out[f.name] = is.Interface()
		}
	}
	return out
}

// orNull is v, or nil (JSON null) when v is its type's zero value, which the status leaves out.
func orNull[T comparable](v T) any {
	var zero T
	if v == zero {
		return nil
	}
	return v
}

// entryFields are the fields of a Target's entry with their JSON names, every one of them: a field added
// to TargetClusterState is written without a change here.
var entryFields = jsonFields(reflect.TypeFor[operatorv1alpha1.TargetClusterState]())

// jsonField is a struct field by its index and its JSON name.
type jsonField struct {
	index int
	name  string
}

// jsonFields lists the fields of struct type t that encoding/json encodes, under the names it gives them.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{index: i, name: name})
	}
	return out
}
