package owned

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// The operator writes and deletes only objects it made (docs/security.md, "Ownership"). An object is the
// operator's for an owner (a Cluster, a TargetSource) when
//   - its controller reference names the owner's kind of this API group and the owner's name (not its UID: a
//     Cluster deleted and created again takes over the objects its namesake left, before the garbage collector
//     removes them), or
//   - it has no controller reference and its operator.gnmic.dev/owner annotation names the owner: the operator
//     sets it on every object it makes, so an object that lost its reference is still known, and a user sets it
//     to hand an existing object over (as Helm adopts an object annotated with its release), or
//   - it has no controller reference and carries both the owner's label and the desired-hash annotation: an
//     object an operator release before the owner annotation made, whose reference was removed by hand.
//
// Anything else of the name is someone else's: it is left exactly as it is, and the owner reports the name as
// taken (NameTakenError).

// OwnerAnnotation names, on an object the operator made, its owner as "<Kind>/<name>".
const OwnerAnnotation = operatorv1alpha1.OwnerAnnotation

// OwnerValue is OwnerAnnotation's value for an owner of that kind and name.
func OwnerValue(kind, name string) string { return kind + "/" + name }

// HolderOf says who holds have when it is not ownerKind owner's, and "" when it is the owner's.
// ownerLabel is the label the owner's objects carry with its name (empty: the owner kind has none).
func HolderOf(ownerKind, ownerLabel string, owner, have metav1.Object) string {
	if ref := metav1.GetControllerOfNoCopy(have); ref != nil {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err == nil && gv.Group == operatorv1alpha1.GroupVersion.Group && ref.Kind == ownerKind && ref.Name == owner.GetName() {
			return ""
		}
		return fmt.Sprintf("controlled by %s %s", ref.Kind, ref.Name)
	}
	annotations := have.GetAnnotations()
	switch v, ok := annotations[OwnerAnnotation]; {
	case ok && v == OwnerValue(ownerKind, owner.GetName()):
		return ""
	case ok:
		return "annotated " + OwnerAnnotation + "=" + v
	}
	if ownerLabel != "" && have.GetLabels()[ownerLabel] == owner.GetName() && annotations[desiredHashAnnotation] != "" {
		return ""
	}
	return "not made by the operator"
}

// OwnerAnnotations is the owner annotation the operator puts on an object it makes for that owner.
func OwnerAnnotations(kind, name string) map[string]string {
	return map[string]string{OwnerAnnotation: OwnerValue(kind, name)}
}

// CheckClusterOwns returns nil when obj, an existing object of that kind under a name the Cluster needs, is
// the Cluster's, and a *NameTakenError naming who holds it otherwise.
func CheckClusterOwns(cluster, obj metav1.Object, kind string) error {
	if holder := HolderOf("Cluster", operatorv1alpha1.ClusterLabel, cluster, obj); holder != "" {
		return &NameTakenError{Kind: kind, Name: obj.GetName(), Holder: holder}
	}
	return nil
}

// NameTakenError is an object the operator would write for an owner that exists and is not the owner's: it was
// left as it is.
type NameTakenError struct {
	// Kind and Name of the object; Holder who has it (HolderOf).
	Kind, Name, Holder string
}

func (e *NameTakenError) Error() string {
	return fmt.Sprintf("%s %s exists and is not the operator's (%s)", e.Kind, e.Name, e.Holder)
}

// Taken collects the names taken that one pass over an owner found, and passes every other error on.
type Taken struct {
	names []NameTakenError
}

// Keep records err when it is a NameTakenError and returns nil then; any other error is returned as it is.
func (t *Taken) Keep(err error) error {
	var taken *NameTakenError
	if errors.As(err, &taken) {
		t.names = append(t.names, *taken)
		return nil
	}
	return err
}

// Has tells whether the object of that kind and name was found taken.
func (t *Taken) Has(kind, name string) bool {
	return slices.ContainsFunc(t.names, func(n NameTakenError) bool { return n.Kind == kind && n.Name == name })
}

// Names are the objects found taken, sorted by kind and name.
func (t *Taken) Names() []NameTakenError {
	out := slices.Clone(t.names)
	slices.SortFunc(out, func(a, b NameTakenError) int {
		return strings.Compare(a.Kind+"/"+a.Name, b.Kind+"/"+b.Name)
	})
	return slices.CompactFunc(out, func(a, b NameTakenError) bool { return a.Kind == b.Kind && a.Name == b.Name })
}

// Message says which objects are taken, by whom, and how to resolve it, in at most limit names.
func Message(ownerKind, ownerName string, names []NameTakenError, limit int) string {
	parts := make([]string, 0, min(len(names), limit))
	for _, n := range names[:min(len(names), limit)] {
		parts = append(parts, fmt.Sprintf("%s %s (%s)", n.Kind, n.Name, n.Holder))
	}
	more := ""
	if len(names) > limit {
		more = fmt.Sprintf(" and %d more", len(names)-limit)
	}
	return fmt.Sprintf("%d object(s) the %s needs exist and are not the operator's, and are left as they are: %s%s; "+
		"rename the %s, or remove them, or hand them over with the annotation %s=%s",
		len(names), ownerKind, strings.Join(parts, ", "), more, ownerKind, OwnerAnnotation, OwnerValue(ownerKind, ownerName))
}
