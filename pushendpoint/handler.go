package pushendpoint

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/inventory"
	"github.com/gnmic-operator/gnmic-operator/internal/push"
)

// PathPrefix is where the endpoint serves: POST /targetsources/{namespace}/{name} replaces the TargetSource's
// snapshot, POST /targetsources/{namespace}/{name}/delta changes it.
const PathPrefix = "/targetsources/"

var (
	// errUnknownSource: no TargetSource of that name in that namespace (or one the operator does not watch).
	errUnknownSource = errors.New("no such TargetSource")
	// errNotPush: the TargetSource exists and takes its records from another provider.
	errNotPush = errors.New("the TargetSource's provider is not push")
	// errNoCredential: the TargetSource's Secret or its key is missing: nothing can authenticate.
	errNoCredential = errors.New("the TargetSource's push Secret is missing")
)

// sourceFinder finds the push TargetSource a post names, with its credential.
type sourceFinder interface {
	find(ctx context.Context, key types.NamespacedName) (Source, error)
}

// snapshots stores what a post carries.
type snapshots interface {
	replace(ctx context.Context, src Source, records []push.Record) (Stored, error)
	applyDelta(ctx context.Context, src Source, d push.Delta) (Stored, push.DeltaResult, error)
}

// notifier tells the TargetSource's controller, and its users, what a post did.
type notifier interface {
	// pushed wakes the controller that syncs the TargetSource: the snapshot changed.
	pushed(ctx context.Context, src Source, stored Stored) error
	// event records an Event on the TargetSource.
	event(src Source, warning bool, reason, message string)
}

// handler answers posts: it reads no more than the TargetSource's limit of a body, authenticates it against
// the TargetSource's Secret (a bearer token before the body is read), and only then parses and stores it.
// Every answer is JSON.
type handler struct {
	sources   sourceFinder
	snapshots snapshots
	notify    notifier
	// slots bounds the posts whose bodies are read and handled at once (nil: no bound): each holds its body
	// and its parsed records in memory. More wait for their turn.
	slots chan struct{}
	// bodyTimeout bounds the reading of a body, once its slot is taken (0: defaultBodyTimeout): a sender that
	// trickles its body, authenticated or not (a signature is checked only once the body is read), holds a
	// slot no longer.
	bodyTimeout time.Duration
}

// defaultBodyTimeout is how long a body may take to arrive: 16 MiB (the default maxBodyBytes) at 1 MB/s.
const defaultBodyTimeout = 15 * time.Second

// answer is the JSON body of every response.
type answer struct {
	Error string `json:"error,omitempty"`
	// Records is set on success, 0 included (an empty snapshot).
	Records  *int   `json:"records,omitempty"`
	Digest   string `json:"digest,omitempty"`
	Changed  bool   `json:"changed,omitempty"`
	Added    int    `json:"added,omitempty"`
	Replaced int    `json:"replaced,omitempty"`
	Deleted  int    `json:"deleted,omitempty"`
	// Missing counts deletes of keys the snapshot did not hold.
	Missing int `json:"missing,omitempty"`
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key, delta, ok := parsePath(r.URL.Path)
	if !ok {
		h.refuse(w, nil, http.StatusNotFound, resultNotFound,
			"not found: post to "+PathPrefix+"{namespace}/{name} (a snapshot) or "+PathPrefix+"{namespace}/{name}/delta")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.refuse(w, nil, http.StatusMethodNotAllowed, resultMethodNotAllowed, "method "+r.Method+" not allowed: POST")
		return
	}
	ctx := r.Context()
	logger := log.FromContext(ctx).WithValues("targetSource", key, "remote", r.RemoteAddr)
	src, err := h.sources.find(ctx, key)
	switch {
	case errors.Is(err, errUnknownSource):
		h.refuse(w, nil, http.StatusNotFound, resultNotFound, fmt.Sprintf("TargetSource %s not found", key))
		return
	case errors.Is(err, errNotPush):
		h.refuse(w, &src, http.StatusConflict, resultNotPush, err.Error())
		return
	case errors.Is(err, errNoCredential):
		// Said in the log and an Event, not to a sender that is not authenticated.
		logger.Error(err, "push refused: nothing can authenticate")
		h.notify.event(src, true, EventPushRefused, "a post was refused: "+err.Error())
		w.Header().Set("WWW-Authenticate", challenge(src.Credential.Scheme))
		h.refuse(w, &src, http.StatusUnauthorized, resultUnauthenticated, "unauthenticated")
		return
	case err != nil:
		logger.Error(err, "push: find the TargetSource")
		h.refuse(w, nil, http.StatusInternalServerError, resultError, "internal error, try again")
		return
	}
	if enc := r.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		h.refuse(w, &src, http.StatusUnsupportedMediaType, resultUnsupported, "Content-Encoding "+enc+" not supported: post plain JSON")
		return
	}

	// A bearer token is checked before the body is read: an unauthenticated sender then costs no memory and
	// holds no slot. A signature needs the body.
	if src.Credential.Scheme != push.HMACSHA256 {
		if err := src.Credential.Authenticate(r.Header, nil); err != nil {
			h.unauthenticated(ctx, w, src, err)
			return
		}
	}
	if h.slots != nil {
		select {
		case h.slots <- struct{}{}:
			defer func() { <-h.slots }()
		case <-ctx.Done():
			return
		}
	}
	bodyTimeout := cmp.Or(h.bodyTimeout, defaultBodyTimeout)
	// Not supported by a ResponseWriter of tests only; the server's ReadTimeout bounds the read then.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyTimeout))
	body, err := readBody(w, r, src.MaxBodyBytes)
	if err != nil {
		var tooLarge *http.MaxBytesError
		var netErr net.Error
		switch {
		case errors.As(err, &tooLarge):
			h.overBudget(ctx, w, src, fmt.Sprintf("body larger than %d bytes (spec.push.maxBodyBytes, at most --targetsource-push-max-body-bytes)", src.MaxBodyBytes))
		case errors.As(err, &netErr) && netErr.Timeout():
			h.refuse(w, &src, http.StatusRequestTimeout, resultInvalid, fmt.Sprintf("the body did not arrive within %s", bodyTimeout))
		default:
			h.refuse(w, &src, http.StatusBadRequest, resultInvalid, "read body: "+err.Error())
		}
		return
	}
	if err := src.Credential.Authenticate(r.Header, body); err != nil {
		h.unauthenticated(ctx, w, src, err)
		return
	}

	var stored Stored
	var res answer
	if delta {
		d, err := push.ParseDelta(body, src.KeyField, src.MaxRecords)
		if err != nil {
			h.parseFailed(ctx, w, src, err)
			return
		}
		var dr push.DeltaResult
		stored, dr, err = h.snapshots.applyDelta(ctx, src, d)
		if err != nil {
			h.storeFailed(ctx, w, src, err)
			return
		}
		res = answer{Added: dr.Added, Replaced: dr.Replaced, Deleted: dr.Deleted, Missing: dr.Missing}
	} else {
		records, err := push.ParseSnapshot(body, src.KeyField, src.MaxRecords)
		if err != nil {
			h.parseFailed(ctx, w, src, err)
			return
		}
		if stored, err = h.snapshots.replace(ctx, src, records); err != nil {
			h.storeFailed(ctx, w, src, err)
			return
		}
	}
	res.Records, res.Digest, res.Changed = &stored.Records, stored.Digest, stored.Changed
	result := resultUnchanged
	if stored.Changed {
		result = resultApplied
		kind := "snapshot"
		if delta {
			kind = "delta"
		}
		h.notify.event(src, false, EventPushed, fmt.Sprintf("a %s was stored: %d records", kind, stored.Records))
		// The snapshot is stored: were waking the controller to fail, it reads it at its next poll.
		if err := h.notify.pushed(ctx, src, stored); err != nil {
			logger.Error(err, "push stored; waking the TargetSource's controller failed: it syncs at its next poll")
		}
	}
	postsTotal.WithLabelValues(src.Namespace, src.Name, result).Inc()
	writeAnswer(w, http.StatusOK, res)
}

// unauthenticated refuses a post whose credentials are wrong or missing. The reason helps the sender's
// operator and reveals nothing of the secret.
func (h *handler) unauthenticated(ctx context.Context, w http.ResponseWriter, src Source, err error) {
	log.FromContext(ctx).Info("push refused", "targetSource", src.key(), "reason", err.Error())
	h.notify.event(src, true, EventPushRefused, "an unauthenticated post was refused: "+err.Error())
	w.Header().Set("WWW-Authenticate", challenge(src.Credential.Scheme))
	h.refuse(w, &src, http.StatusUnauthorized, resultUnauthenticated, err.Error())
}

// overBudget refuses a post over a budget (413), and says so on the TargetSource: its inventory sends more than
// it may, and the snapshot stays the last one stored.
func (h *handler) overBudget(ctx context.Context, w http.ResponseWriter, src Source, message string) {
	log.FromContext(ctx).Info("push refused over budget", "targetSource", src.key(), "reason", message)
	h.notify.event(src, true, operatorv1alpha1.EventBudgetExceeded, "a post was refused, the snapshot stays as it was: "+message)
	h.refuse(w, &src, http.StatusRequestEntityTooLarge, resultTooLarge, message)
}

// parseFailed refuses a body that is over budget (413) or not a snapshot or delta (400).
func (h *handler) parseFailed(ctx context.Context, w http.ResponseWriter, src Source, err error) {
	if inventory.IsBudgetExceeded(err) {
		h.overBudget(ctx, w, src, err.Error())
		return
	}
	h.refuse(w, &src, http.StatusBadRequest, resultInvalid, err.Error())
}

// storeFailed answers a failed store: too large (413), a ConfigMap not the TargetSource's (409), a stored
// snapshot a delta cannot apply to (400), or the API server (500).
func (h *handler) storeFailed(ctx context.Context, w http.ResponseWriter, src Source, err error) {
	switch {
	case inventory.IsBudgetExceeded(err):
		h.overBudget(ctx, w, src, err.Error())
	case errors.Is(err, errTooLarge):
		h.refuse(w, &src, http.StatusRequestEntityTooLarge, resultTooLarge, err.Error())
	case errors.Is(err, errNotOwned):
		h.notify.event(src, true, EventPushRefused, err.Error())
		h.refuse(w, &src, http.StatusConflict, resultConflict, err.Error())
	case errors.Is(err, push.ErrInvalid):
		h.refuse(w, &src, http.StatusBadRequest, resultInvalid, err.Error())
	default:
		log.FromContext(ctx).Error(err, "push: store the snapshot", "targetSource", src.key())
		h.refuse(w, &src, http.StatusInternalServerError, resultError, "internal error storing the snapshot, try again")
	}
}

// refuse answers an error and counts it, under the TargetSource when the post named an existing one.
func (h *handler) refuse(w http.ResponseWriter, src *Source, status int, result, message string) {
	namespace, name := "", ""
	if src != nil {
		namespace, name = src.Namespace, src.Name
	}
	postsTotal.WithLabelValues(namespace, name, result).Inc()
	writeAnswer(w, status, answer{Error: message})
}

func writeAnswer(w http.ResponseWriter, status int, a answer) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(a)
}

// readBody reads at most max bytes; a larger body is a *http.MaxBytesError, found from Content-Length before
// anything is read when the sender declares it.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	if r.ContentLength > max {
		return nil, &http.MaxBytesError{Limit: max}
	}
	return io.ReadAll(http.MaxBytesReader(w, r.Body, max))
}

// parsePath reads /targetsources/{namespace}/{name}[/delta].
func parsePath(path string) (types.NamespacedName, bool, bool) {
	rest, ok := strings.CutPrefix(path, PathPrefix)
	if !ok {
		return types.NamespacedName{}, false, false
	}
	parts := strings.Split(rest, "/")
	delta := false
	switch {
	case len(parts) == 3 && parts[2] == "delta":
		delta = true
	case len(parts) == 2:
	default:
		return types.NamespacedName{}, false, false
	}
	if len(validation.IsDNS1123Label(parts[0])) > 0 || len(validation.IsDNS1123Subdomain(parts[1])) > 0 {
		return types.NamespacedName{}, false, false
	}
	return types.NamespacedName{Namespace: parts[0], Name: parts[1]}, delta, true
}

// challenge is the WWW-Authenticate header of a 401.
func challenge(scheme push.Scheme) string {
	if scheme == push.HMACSHA256 {
		return `HMAC-SHA256 realm="gnmic-operator", header="` + push.SignatureHeader + `"`
	}
	return `Bearer realm="gnmic-operator"`
}
