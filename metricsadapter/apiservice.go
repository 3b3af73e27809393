package metricsadapter

import (
	"context"
	"encoding/base64"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

var apiServiceGVK = schema.GroupVersionKind{Group: "apiregistration.k8s.io", Version: "v1", Kind: "APIService"}

// apiServiceVersion is one group/version the operator registers.
type apiServiceVersion struct {
	Group           string
	Version         string
	VersionPriority int64
}

func (v apiServiceVersion) name() string { return v.Version + "." + v.Group }

// servedVersions are the APIServices of the switched-on APIs. custom-metrics-apiserver serves
// custom.metrics.k8s.io in v1beta2 (preferred) and v1beta1, external.metrics.k8s.io in v1beta1.
func servedVersions(opts Options) []apiServiceVersion {
	var out []apiServiceVersion
	if opts.CustomMetrics {
		out = append(out,
			apiServiceVersion{Group: "custom.metrics.k8s.io", Version: "v1beta1", VersionPriority: 100},
			apiServiceVersion{Group: "custom.metrics.k8s.io", Version: "v1beta2", VersionPriority: 200})
	}
	if opts.ExternalMetrics {
		out = append(out, apiServiceVersion{Group: "external.metrics.k8s.io", Version: "v1beta1", VersionPriority: 100})
	}
	return out
}

// apiServiceRegistrar creates the APIServices of the served APIs, pointing at the operator's Service with
// the current CA bundle, and keeps them so. An APIService of the same name that points elsewhere belongs to
// another component (KEDA, Prometheus Adapter, metrics-server…): it is never modified, only reported in
// the log, an Event and gnmic_operator_metrics_api_conflict. The other APIs are served regardless.
type apiServiceRegistrar struct {
	reader   client.Reader
	writer   client.Writer
	recorder events.EventRecorder
	versions []apiServiceVersion
	service  types.NamespacedName
	port     int32
	period   time.Duration
	// caBundle returns the PEM CA that signed the serving certificate, nil while there is none yet.
	caBundle func(ctx context.Context) ([]byte, error)
	// owners finds the objects of the install that own the APIServices (see install_owner.go).
	owners *installOwners

	// ownerless is set once the operator was found running as a user that is not a ServiceAccount.
	ownerless bool

	mu        sync.Mutex
	conflicts map[string]string
}

// NeedLeaderElection is false: every replica reports conflicts in its own metrics; writes are idempotent.
func (r *apiServiceRegistrar) NeedLeaderElection() bool { return false }

// Start registers the APIServices now and again every period, until ctx ends.
func (r *apiServiceRegistrar) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("metrics-apiservices")
	ctx = log.IntoContext(ctx, logger)
	wait := time.Second
	for {
		if err := r.registerAll(ctx); err != nil {
			logger.Error(err, "register metrics APIServices")
		} else {
			wait = r.period
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// registerAll registers every served version once the CA bundle is known.
func (r *apiServiceRegistrar) registerAll(ctx context.Context) error {
	ca, err := r.caBundle(ctx)
	if err != nil {
		return fmt.Errorf("read CA bundle: %w", err)
	}
	if len(ca) == 0 {
		return fmt.Errorf("no CA bundle yet in the certificate secret")
	}
	owners, err := r.owners.find(ctx)
	if err != nil {
		return fmt.Errorf("find the install's objects that own the APIServices: %w", err)
	}
	if owners == nil && !r.ownerless {
		r.ownerless = true
		log.FromContext(ctx).Info("the operator does not run as a ServiceAccount: its APIServices get no owner and " +
			"stay when it stops; delete them by hand or run with --metrics-api-manage-apiservices=false")
	}
	var errs []error
	for _, v := range r.versions {
		if err := r.register(ctx, v, ca, owners); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d of %d APIServices: %w", len(errs), len(r.versions), errs[0])
	}
	return nil
}

// register creates or updates one APIService, owned by owners, unless another component owns it.
func (r *apiServiceRegistrar) register(ctx context.Context, v apiServiceVersion, ca []byte, owners []metav1.OwnerReference) error {
	desired := r.desired(v, ca)
	desired.SetOwnerReferences(owners)
	current := &unstructured.Unstructured{}
	current.SetGroupVersionKind(apiServiceGVK)
	err := r.reader.Get(ctx, types.NamespacedName{Name: v.name()}, current)
	switch {
	case apierrors.IsNotFound(err):
		r.owned(ctx, v.name())
		if err := r.writer.Create(ctx, desired); err != nil {
			return fmt.Errorf("create APIService %s: %w", v.name(), err)
		}
		log.FromContext(ctx).Info("APIService registered", "apiservice", v.name())
		return nil
	case err != nil:
		return fmt.Errorf("get APIService %s: %w", v.name(), err)
	}

	owner := serviceOf(current)
	if owner != r.service {
		r.conflict(ctx, current, owner)
		return nil
	}
	r.owned(ctx, v.name())
	currentSpec, _, _ := unstructured.NestedMap(current.Object, "spec")
	desiredSpec, _, _ := unstructured.NestedMap(desired.Object, "spec")
	if fmt.Sprint(currentSpec) == fmt.Sprint(desiredSpec) && sameOwners(current.GetOwnerReferences(), owners) {
		return nil
	}
	desired.SetResourceVersion(current.GetResourceVersion())
	desired.SetLabels(current.GetLabels())
	if err := r.writer.Update(ctx, desired); err != nil {
		return fmt.Errorf("update APIService %s: %w", v.name(), err)
	}
	log.FromContext(ctx).Info("APIService updated", "apiservice", v.name())
	return nil
}

func (r *apiServiceRegistrar) desired(v apiServiceVersion, ca []byte) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{
			"name":   v.name(),
			"labels": map[string]any{"app.kubernetes.io/managed-by": "gnmic-operator"},
		},
		"spec": map[string]any{
			"group":                v.Group,
			"version":              v.Version,
			"groupPriorityMinimum": int64(100),
			"versionPriority":      v.VersionPriority,
			"caBundle":             base64.StdEncoding.EncodeToString(ca),
			"service": map[string]any{
				"name":      r.service.Name,
				"namespace": r.service.Namespace,
				"port":      int64(r.port),
			},
		},
	}}
	u.SetGroupVersionKind(apiServiceGVK)
	return u
}

// serviceOf is the Service an APIService points at; empty for an APIService served by kube-apiserver itself.
func serviceOf(apiService *unstructured.Unstructured) types.NamespacedName {
	name, _, _ := unstructured.NestedString(apiService.Object, "spec", "service", "name")
	namespace, _, _ := unstructured.NestedString(apiService.Object, "spec", "service", "namespace")
	return types.NamespacedName{Namespace: namespace, Name: name}
}

// conflict reports, once per change of owner, an APIService another component owns.
func (r *apiServiceRegistrar) conflict(ctx context.Context, apiService *unstructured.Unstructured, owner types.NamespacedName) {
	apiServiceConflict.WithLabelValues(apiService.GetName()).Set(1)
	ownerName := owner.String()
	if owner.Name == "" {
		ownerName = "kube-apiserver (local)"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conflicts == nil {
		r.conflicts = map[string]string{}
	}
	if r.conflicts[apiService.GetName()] == ownerName {
		return
	}
	r.conflicts[apiService.GetName()] = ownerName
	logr.FromContextOrDiscard(ctx).Info("APIService belongs to another component; leaving it alone and not serving it",
		"apiservice", apiService.GetName(), "service", ownerName)
	if r.recorder != nil {
		r.recorder.Eventf(apiService, nil, corev1.EventTypeWarning, "MetricsAPIConflict", "RegisterAPIService",
			"APIService %s points at %s, not at %s: gnmic-operator leaves it alone and does not serve this API version",
			apiService.GetName(), ownerName, r.service)
	}
}

// owned clears a reported conflict.
func (r *apiServiceRegistrar) owned(ctx context.Context, name string) {
	apiServiceConflict.WithLabelValues(name).Set(0)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, was := r.conflicts[name]; was {
		delete(r.conflicts, name)
		logr.FromContextOrDiscard(ctx).Info("APIService is the operator's again", "apiservice", name)
	}
}
