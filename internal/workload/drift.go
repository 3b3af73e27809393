package workload

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Drift lists the fields of desired, an object as this package builds it, that live, the same object as the
// API server has it, does not hold: what someone changed by hand (kubectl scale, kubectl edit) and the
// operator restores. Only what desired sets is compared, so that what the API server fills in (defaults, an
// allocated clusterIP, status) or other tools add (kubectl rollout restart's pod template annotation) never
// counts, and an unchanged object costs no write:
//   - a field desired leaves zero or nil is not compared; a pointer desired sets is, even to false or 0;
//   - lists are compared element by element and must be as long: the operator owns whole lists (an extra
//     Service port is drift);
//   - maps are compared whole (the operator owns a selector, the bootstrap ConfigMap's data), except labels
//     and annotations, of which only desired's keys count;
//   - quantities are compared by value ("1000m" is "1"), other types with their own JSON form (an
//     int-or-string) as one value;
//   - of metadata, only labels, annotations and owner references are compared; status never is.
//
// Paths name the fields as in the object's JSON, such as "spec.replicas" or "spec.ports[0].port"; the
// result is empty when live holds everything desired sets. live and desired are pointers to the same type.
func Drift(live, desired any) []string {
	l, d := reflect.ValueOf(live), reflect.ValueOf(desired)
	if l.Type() != d.Type() || l.Kind() != reflect.Pointer || l.Elem().Kind() != reflect.Struct {
		return []string{fmt.Sprintf("<%T is not %T>", live, desired)}
	}
	var w drift
	w.object(l.Elem(), d.Elem())
	return w.paths
}

var (
	quantityType   = reflect.TypeOf(resource.Quantity{})
	objectMetaType = reflect.TypeOf(metav1.ObjectMeta{})
	typeMetaType   = reflect.TypeOf(metav1.TypeMeta{})
	marshalerType  = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
)

// drift collects the paths that differ.
type drift struct{ paths []string }

func (w *drift) add(path string) { w.paths = append(w.paths, path) }

// object compares a top-level object: everything but its status.
func (w *drift) object(live, desired reflect.Value) {
	for i := 0; i < desired.NumField(); i++ {
		if desired.Type().Field(i).Name == "Status" {
			continue
		}
		w.field(live, desired, i, "")
	}
}

// field compares the i-th field of two structs; struct fields are optional: zero in desired means unset.
func (w *drift) field(live, desired reflect.Value, i int, path string) {
	f := desired.Type().Field(i)
	if !f.IsExported() {
		return
	}
	name, inline := jsonName(f)
	if !inline {
		path = join(path, name)
	}
	w.value(path, live.Field(i), desired.Field(i), true)
}

// value compares one value. optional is true for struct fields, whose zero value in desired means that the
// operator does not set them; map values, list elements and what a pointer points to are always compared.
func (w *drift) value(path string, live, desired reflect.Value, optional bool) {
	if optional && desired.IsZero() {
		return
	}
	switch t := desired.Type(); {
	case t == quantityType:
		l, d := live.Interface().(resource.Quantity), desired.Interface().(resource.Quantity)
		if l.Cmp(d) != 0 {
			w.add(path)
		}
		return
	case t == typeMetaType:
		return
	case t.Kind() == reflect.Struct && reflect.PointerTo(t).Implements(marshalerType):
		// A type with its own JSON form (an int-or-string, a time) is one value, not a set of fields.
		if !reflect.DeepEqual(live.Interface(), desired.Interface()) {
			w.add(path)
		}
		return
	case t == objectMetaType:
		w.metadata(path, live, desired)
		return
	}
	switch desired.Kind() {
	case reflect.Pointer, reflect.Interface:
		if desired.IsNil() || live.IsNil() {
			if desired.IsNil() != live.IsNil() {
				w.add(path)
			}
			return
		}
		w.value(path, live.Elem(), desired.Elem(), false)
	case reflect.Struct:
		for i := 0; i < desired.NumField(); i++ {
			w.field(live, desired, i, path)
		}
	case reflect.Slice, reflect.Array:
		if live.Len() != desired.Len() {
			w.add(path)
			return
		}
		for i := 0; i < desired.Len(); i++ {
			w.value(fmt.Sprintf("%s[%d]", path, i), live.Index(i), desired.Index(i), false)
		}
	case reflect.Map:
		w.mapValues(path, live, desired, true)
	default:
		if !live.Equal(desired) {
			w.add(path)
		}
	}
}

// metadata compares labels and annotations by desired's keys, and owner references whole: the rest of an
// object's metadata is the API server's.
func (w *drift) metadata(path string, live, desired reflect.Value) {
	l, d := live.Interface().(metav1.ObjectMeta), desired.Interface().(metav1.ObjectMeta)
	w.mapValues(join(path, "labels"), reflect.ValueOf(l.Labels), reflect.ValueOf(d.Labels), false)
	w.mapValues(join(path, "annotations"), reflect.ValueOf(l.Annotations), reflect.ValueOf(d.Annotations), false)
	w.value(join(path, "ownerReferences"), reflect.ValueOf(l.OwnerReferences), reflect.ValueOf(d.OwnerReferences), true)
}

// mapValues compares desired's keys, in order; whole also makes a key only live has drift.
func (w *drift) mapValues(path string, live, desired reflect.Value, whole bool) {
	keys := desired.MapKeys()
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
	for _, k := range keys {
		at := fmt.Sprintf("%s[%v]", path, k)
		l := live.MapIndex(k)
		if !l.IsValid() {
			w.add(at)
			continue
		}
		w.value(at, l, desired.MapIndex(k), false)
	}
	if whole && live.Len() != desired.Len() {
		w.add(path)
	}
}

// jsonName is the field's name in JSON; inline is true for embedded fields whose fields are the struct's own.
func jsonName(f reflect.StructField) (name string, inline bool) {
	tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if tag == "" && f.Anonymous {
		return "", true
	}
	if tag == "" {
		return f.Name, false
	}
	return tag, false
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// Merged is have with want's keys set to want's values: the labels and annotations others add to an object the
// operator writes are kept. have is changed in place unless it is nil.
func Merged(have, want map[string]string) map[string]string {
	if have == nil {
		have = make(map[string]string, len(want))
	}
	maps.Copy(have, want)
	return have
}
