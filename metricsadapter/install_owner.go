package metricsadapter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The APIServices the operator registers at run time must go when the operator is uninstalled: an APIService
// that points at nothing breaks discovery (kubectl api-resources, namespace deletion) for every user of the
// cluster. Uninstalling removes the operator's RBAC in every install this project ships (kubectl delete of
// config/default; OLM's CSV finalizer deletes the ClusterRoleBindings it generated from clusterPermissions),
// so the APIServices are owned by the ClusterRoleBindings of the install that bind the operator's
// ServiceAccount, and Kubernetes' garbage collector deletes them once the last of those is gone. Every
// binding rather than one: an OLM upgrade creates the new version's binding before it deletes the old one,
// and the APIServices must outlive that.

// installLabels mark the ClusterRoleBindings of an install: kustomize's label from config/default, and the
// owner kind OLM gives the bindings it generates from a CSV's clusterPermissions.
var installLabels = []struct{ key, value string }{
	{"app.kubernetes.io/name", "gnmic-operator"},
	{"olm.owner.kind", "ClusterServiceVersion"},
}

// errNoInstallBinding says that the operator runs as a ServiceAccount that no ClusterRoleBinding binds: the
// install is being removed (its bindings are deleted first) or is incomplete. Registering an APIService then
// would leave one that nothing removes.
var errNoInstallBinding = errors.New("no ClusterRoleBinding binds the operator's ServiceAccount")

// installOwners finds the objects that own the metrics APIServices. One goroutine uses it: the registrar's.
type installOwners struct {
	reader client.Reader
	writer client.Writer

	identity string // the operator's user name, once known
}

// serviceAccount is the namespace and name of the ServiceAccount the operator runs as, ok false when it runs
// as another kind of user (for example `make run` with an administrator's kubeconfig).
func (o *installOwners) serviceAccount(ctx context.Context) (namespace, name string, ok bool, err error) {
	if o.identity == "" {
		review := &authenticationv1.SelfSubjectReview{}
		if err := o.writer.Create(ctx, review); err != nil {
			return "", "", false, fmt.Errorf("ask who the operator is (SelfSubjectReview): %w", err)
		}
		o.identity = review.Status.UserInfo.Username
	}
	rest, isServiceAccount := strings.CutPrefix(o.identity, "system:serviceaccount:")
	namespace, name, found := strings.Cut(rest, ":")
	return namespace, name, isServiceAccount && found, nil
}

// find returns the owner references the APIServices should carry, sorted by name: the ClusterRoleBindings
// that bind the operator's ServiceAccount and carry an install label, or, when none does (an install made
// by other means), every ClusterRoleBinding of that ServiceAccount. Bindings being deleted do not count.
// It returns nil and no error when the operator does not run as a ServiceAccount: nothing of an install
// then owns it, and the APIServices are registered without owners. It returns errNoInstallBinding when it
// runs as a ServiceAccount that no binding binds.
func (o *installOwners) find(ctx context.Context) ([]metav1.OwnerReference, error) {
	namespace, name, ok, err := o.serviceAccount(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, nil
	}
	var bindings rbacv1.ClusterRoleBindingList
	if err := o.reader.List(ctx, &bindings); err != nil {
		return nil, fmt.Errorf("list ClusterRoleBindings: %w", err)
	}
	var labelled, all []metav1.OwnerReference
	for _, b := range bindings.Items {
		if b.DeletionTimestamp != nil || !bindsServiceAccount(b, namespace, name) {
			continue
		}
		ref := metav1.OwnerReference{
			APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding", Name: b.Name, UID: b.UID,
		}
		all = append(all, ref)
		if hasInstallLabel(b.Labels) {
			labelled = append(labelled, ref)
		}
	}
	owners := labelled
	if len(owners) == 0 {
		owners = all
	}
	if len(owners) == 0 {
		return nil, fmt.Errorf("%w (%s/%s)", errNoInstallBinding, namespace, name)
	}
	slices.SortFunc(owners, func(a, b metav1.OwnerReference) int { return strings.Compare(a.Name, b.Name) })
	return owners, nil
}

func bindsServiceAccount(b rbacv1.ClusterRoleBinding, namespace, name string) bool {
	for _, s := range b.Subjects {
		if s.Kind == rbacv1.ServiceAccountKind && s.Namespace == namespace && s.Name == name {
			return true
		}
	}
	return false
}

func hasInstallLabel(labels map[string]string) bool {
	for _, l := range installLabels {
		if labels[l.key] == l.value {
			return true
		}
	}
	return false
}

// sameOwners is true when refs name exactly the objects (by UID) of want.
func sameOwners(refs, want []metav1.OwnerReference) bool {
	if len(refs) != len(want) {
		return false
	}
	for i := range refs {
		if refs[i].UID != want[i].UID || refs[i].Kind != want[i].Kind || refs[i].Name != want[i].Name {
			return false
		}
	}
	return true
}
