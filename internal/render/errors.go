package render

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gnmic-operator/gnmic-operator/internal/selection"
)

// SkipError is an object left out of a pod's configuration so that the rest
// can be pushed. Its message names the object and what is wrong with it,
// never a credential.
type SkipError struct {
	Kind selection.Kind
	Name string
	Err  error
}

func (e SkipError) Error() string {
	return fmt.Sprintf("%s %q: %v", strings.ToLower(string(e.Kind)), e.Name, e.Err)
}

func (e SkipError) Unwrap() error { return e.Err }

// Causes of a SkipError, for errors.Is.
var (
	// ErrNotSelected: a target placed on the pod is not in the selection.
	ErrNotSelected = errors.New("not selected by the Cluster's pipelines")
	// ErrInvalidName: the name contains "/", which the collector's API cannot
	// route (it does not match escaped slashes).
	ErrInvalidName = errors.New(`name contains "/", which the collector's API cannot route`)
	// ErrProfileNotFound: the target's TargetProfile does not exist.
	ErrProfileNotFound = errors.New("target profile not found")
	// ErrSecretNotFound: a Secret a profile, Output or Input names does not
	// exist.
	ErrSecretNotFound = errors.New("secret not found")
	// ErrSecretKeyMissing: a Secret lacks a key a profile, Output or Input
	// needs.
	ErrSecretKeyMissing = errors.New("missing key")
	// ErrTLSBundleFull: a TLS Secret's files do not fit in the Cluster's target
	// TLS Secret next to those of the other targets (BundleTLS).
	ErrTLSBundleFull = errors.New("does not fit in the Cluster's target TLS Secret, which holds at most 1 MiB of TLS files for all its targets")
	// ErrNoOutputs: an input feeds no output, which the collector rejects.
	ErrNoOutputs = errors.New("no output selected: the collector rejects an input without outputs")
	// ErrInvalidJSON: a value of an output's or input's spec.config is not
	// JSON.
	ErrInvalidJSON = errors.New("not valid JSON")
	// ErrUnknownMode: a subscription mode the renderer does not know.
	ErrUnknownMode = errors.New("unknown mode")
	// ErrHistoryNotSupported: a subscription sets spec.history. The API
	// server refuses that since the field's validation rule exists; this
	// catches Subscriptions stored before it.
	ErrHistoryNotSupported = errors.New("spec.history is not supported: gNMIc's REST API cannot carry history times and would refuse the pod's whole configuration")
	// ErrNotAnObject: a key of an Output's or Input's spec.secretRefs goes
	// through a value of spec.config that is not an object.
	ErrNotAnObject = errors.New("is not an object, so no key can be set inside it")
	// ErrProcessorNotFound: an output's or input's processor chain names a
	// Processor that does not exist.
	ErrProcessorNotFound = errors.New("processor not found")
	// ErrInvalidProcessor: a Processor's config is one the collector fails
	// on (CheckProcessor).
	ErrInvalidProcessor = errors.New("the collector would fail on it")
	// ErrDependencySkipped: the object uses another one that was skipped.
	ErrDependencySkipped = errors.New("skipped (see its own error)")
)
