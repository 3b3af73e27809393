package pushendpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/push"
)

// memorySources are the TargetSources of a handler test: push ones by key, and names of others.
type memorySources struct {
	push    map[types.NamespacedName]Source
	notPush map[types.NamespacedName]bool
}

func (m memorySources) find(_ context.Context, key types.NamespacedName) (Source, error) {
	if src, ok := m.push[key]; ok {
		if len(src.Credential.Secret) == 0 {
			return src, errNoCredential
		}
		return src, nil
	}
	if m.notPush[key] {
		return Source{Namespace: key.Namespace, Name: key.Name}, errNotPush
	}
	return Source{}, errUnknownSource
}

// memorySnapshots keeps the snapshots of a handler test in a map, with the same rules as the ConfigMap store.
type memorySnapshots struct{ stored map[string][]push.Record }

func (m *memorySnapshots) replace(_ context.Context, src Source, records []push.Record) (Stored, error) {
	return m.put(src, records)
}

func (m *memorySnapshots) applyDelta(_ context.Context, src Source, d push.Delta) (Stored, push.DeltaResult, error) {
	next, res, err := push.Apply(m.stored[src.Name], d, src.KeyField)
	if err != nil {
		return Stored{}, res, err
	}
	stored, err := m.put(src, next)
	return stored, res, err
}

func (m *memorySnapshots) put(src Source, records []push.Record) (Stored, error) {
	snap, err := push.Encode(records)
	if err != nil {
		return Stored{}, err
	}
	before, _ := push.Encode(m.stored[src.Name])
	_, had := m.stored[src.Name]
	m.stored[src.Name] = records
	return Stored{Digest: snap.Digest, Records: snap.Records, Changed: !had || before.Digest != snap.Digest}, nil
}

type recordedNotifier struct {
	pushes int
	events []string
}

func (n *recordedNotifier) pushed(context.Context, Source, Stored) error { n.pushes++; return nil }
func (n *recordedNotifier) event(_ Source, _ bool, reason, _ string) {
	n.events = append(n.events, reason)
}

func TestHandler(t *testing.T) {
	token := []byte("t0ken")
	hmacKey := []byte("hmac-key")
	bearer := Source{Namespace: "ns", Name: "bearer", KeyField: "name", MaxBodyBytes: 256,
		Credential: push.Credential{Scheme: push.Bearer, Secret: token}}
	signed := Source{Namespace: "ns", Name: "signed", KeyField: "id", MaxBodyBytes: 1 << 20,
		Credential: push.Credential{Scheme: push.HMACSHA256, Secret: hmacKey}}
	few := Source{Namespace: "ns", Name: "few", KeyField: "name", MaxBodyBytes: 1 << 20, MaxRecords: 1,
		Credential: push.Credential{Scheme: push.Bearer, Secret: token}}
	noSecret := Source{Namespace: "ns", Name: "no-secret", KeyField: "name", MaxBodyBytes: 1 << 20,
		Credential: push.Credential{Scheme: push.Bearer}}
	snapshot := `[{"name":"r1","address":"10.0.0.1"},{"name":"r2","address":"10.0.0.2"}]`
	signedSnapshot := `{"records":[{"id":1},{"id":2},{"id":3}]}`
	bigSnapshot := "[" + strings.Repeat(`{"name":"x"},`, 30) + `{"name":"y"}]`

	type post struct {
		method, path, body string
		header             map[string]string
		chunked            bool
	}
	withToken := map[string]string{"Authorization": "Bearer t0ken"}
	cases := []struct {
		name    string
		posts   []post
		status  int
		want    string
		records map[string]int // what is stored afterwards, by TargetSource
		pushes  int
		events  []string
	}{
		{name: "an authenticated snapshot is stored",
			posts:  []post{{method: "POST", path: "/targetsources/ns/bearer", body: snapshot, header: withToken}},
			status: 200, want: `"records":2`, records: map[string]int{"bearer": 2}, pushes: 1, events: []string{EventPushed}},
		{name: "a post without a token is refused and stores nothing",
			posts:  []post{{method: "POST", path: "/targetsources/ns/bearer", body: snapshot}},
			status: 401, want: "no Authorization header", records: map[string]int{}, events: []string{EventPushRefused}},
		{name: "a wrong token is refused",
			posts:  []post{{method: "POST", path: "/targetsources/ns/bearer", body: snapshot, header: map[string]string{"Authorization": "Bearer t0ke"}}},
			status: 401, want: "wrong bearer token", records: map[string]int{}, events: []string{EventPushRefused}},
		{name: "a TargetSource without its Secret refuses every post, without saying why to the sender",
			posts:  []post{{method: "POST", path: "/targetsources/ns/no-secret", body: snapshot, header: withToken}},
			status: 401, want: `"unauthenticated"`, records: map[string]int{}, events: []string{EventPushRefused}},
		{name: "a signed snapshot is stored",
			posts: []post{{method: "POST", path: "/targetsources/ns/signed", body: signedSnapshot,
				header: map[string]string{push.SignatureHeader: push.SignatureHeaderValue(hmacKey, []byte(signedSnapshot))}}},
			status: 200, want: `"records":3`, records: map[string]int{"signed": 3}, pushes: 1, events: []string{EventPushed}},
		{name: "a body signed with another key is refused",
			posts: []post{{method: "POST", path: "/targetsources/ns/signed", body: signedSnapshot,
				header: map[string]string{push.SignatureHeader: push.SignatureHeaderValue([]byte("other"), []byte(signedSnapshot))}}},
			status: 401, want: "does not match the body", records: map[string]int{}, events: []string{EventPushRefused}},
		{name: "a delta changes the stored snapshot",
			posts: []post{
				{method: "POST", path: "/targetsources/ns/bearer", body: snapshot, header: withToken},
				{method: "POST", path: "/targetsources/ns/bearer/delta", body: `{"upsert":[{"name":"r3"},{"name":"r1","address":"x"}],"delete":["r2","r9"]}`, header: withToken},
			},
			status: 200, want: `"records":2,"digest":`, records: map[string]int{"bearer": 2}, pushes: 2, events: []string{EventPushed, EventPushed}},
		{name: "an empty snapshot is stored and says so",
			posts:  []post{{method: "POST", path: "/targetsources/ns/bearer", body: `[]`, header: withToken}},
			status: 200, want: `"records":0`, records: map[string]int{"bearer": 0}, pushes: 1, events: []string{EventPushed}},
		{name: "the same snapshot twice is stored once",
			posts: []post{
				{method: "POST", path: "/targetsources/ns/bearer", body: snapshot, header: withToken},
				{method: "POST", path: "/targetsources/ns/bearer", body: snapshot, header: withToken},
			},
			status: 200, want: `"records":2`, records: map[string]int{"bearer": 2}, pushes: 1, events: []string{EventPushed}},
		{name: "a body over the limit is refused by its Content-Length",
			posts:  []post{{method: "POST", path: "/targetsources/ns/bearer", body: bigSnapshot, header: withToken}},
			status: 413, want: "larger than 256 bytes", records: map[string]int{}, events: []string{operatorv1alpha1.EventBudgetExceeded}},
		{name: "a body over the limit is refused while it is read when it does not declare its length",
			posts:  []post{{method: "POST", path: "/targetsources/ns/bearer", body: bigSnapshot, header: withToken, chunked: true}},
			status: 413, want: "larger than 256 bytes", records: map[string]int{}, events: []string{operatorv1alpha1.EventBudgetExceeded}},
		{name: "an over-size body is refused before its signature is checked",
			posts:  []post{{method: "POST", path: "/targetsources/ns/signed", body: strings.Repeat(" ", 1<<20+1)}},
			status: 413, want: "larger than 1048576 bytes", records: map[string]int{}, events: []string{operatorv1alpha1.EventBudgetExceeded}},
		{name: "a snapshot of more records than sync.maxRecords is refused",
			posts:  []post{{method: "POST", path: "/targetsources/ns/few", body: snapshot + " ", header: withToken}},
			status: 413, want: "more than 1 records (sync.maxRecords)", records: map[string]int{}, events: []string{operatorv1alpha1.EventBudgetExceeded}},
		{name: "a delta of more upserts than sync.maxRecords is refused",
			posts: []post{{method: "POST", path: "/targetsources/ns/few/delta", header: withToken,
				body: `{"upsert":[{"name":"r1"},{"name":"r2"}]}`}},
			status: 413, want: "more than 1 records (sync.maxRecords)", records: map[string]int{}, events: []string{operatorv1alpha1.EventBudgetExceeded}},
		{name: "a post without a bearer token is refused before its body is read",
			posts:  []post{{method: "POST", path: "/targetsources/ns/bearer", body: bigSnapshot, chunked: true}},
			status: 401, want: "no Authorization header", records: map[string]int{}, events: []string{EventPushRefused}},
		{name: "an authenticated body that is not a snapshot is refused",
			posts:  []post{{method: "POST", path: "/targetsources/ns/bearer", body: `{"results":[]}`, header: withToken}},
			status: 400, want: `needs a \"records\" array`, records: map[string]int{}},
		{name: "a delta with a misspelt field is refused",
			posts:  []post{{method: "POST", path: "/targetsources/ns/bearer/delta", body: `{"deletes":["r1"]}`, header: withToken}},
			status: 400, want: "unknown field", records: map[string]int{}},
		{name: "a compressed body is refused",
			posts:  []post{{method: "POST", path: "/targetsources/ns/bearer", body: snapshot, header: map[string]string{"Authorization": "Bearer t0ken", "Content-Encoding": "gzip"}}},
			status: 415, want: "Content-Encoding gzip", records: map[string]int{}},
		{name: "an unknown TargetSource is not found",
			posts:  []post{{method: "POST", path: "/targetsources/ns/nothing", body: snapshot, header: withToken}},
			status: 404, want: "TargetSource ns/nothing not found", records: map[string]int{}},
		{name: "a TargetSource of another provider is a conflict",
			posts:  []post{{method: "POST", path: "/targetsources/ns/pulled", body: snapshot, header: withToken}},
			status: 409, want: "provider is not push", records: map[string]int{}},
		{name: "GET is not allowed",
			posts:  []post{{method: "GET", path: "/targetsources/ns/bearer", header: withToken}},
			status: 405, want: "not allowed", records: map[string]int{}},
		{name: "PUT is not allowed",
			posts:  []post{{method: "PUT", path: "/targetsources/ns/bearer", body: snapshot, header: withToken}},
			status: 405, want: "not allowed", records: map[string]int{}},
		{name: "another path is not found",
			posts:  []post{{method: "POST", path: "/targetsources/ns/bearer/snapshot", body: snapshot, header: withToken}},
			status: 404, want: "post to /targetsources/", records: map[string]int{}},
		{name: "a namespace that is not a name is not found",
			posts:  []post{{method: "POST", path: "/targetsources/NS_1/bearer", body: snapshot, header: withToken}},
			status: 404, want: "post to /targetsources/", records: map[string]int{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := &memorySnapshots{stored: map[string][]push.Record{}}
			notify := &recordedNotifier{}
			h := &handler{
				sources: memorySources{
					push:    map[types.NamespacedName]Source{bearer.key(): bearer, signed.key(): signed, noSecret.key(): noSecret, few.key(): few},
					notPush: map[types.NamespacedName]bool{{Namespace: "ns", Name: "pulled"}: true},
				},
				snapshots: store, notify: notify, slots: make(chan struct{}, 1),
			}
			var last *httptest.ResponseRecorder
			for _, p := range tc.posts {
				var body io.Reader = strings.NewReader(p.body)
				if p.chunked {
					body = io.MultiReader(bytes.NewReader([]byte(p.body))) // no length known to NewRequest
				}
				req := httptest.NewRequest(p.method, p.path, body)
				for k, v := range p.header {
					req.Header.Set(k, v)
				}
				last = httptest.NewRecorder()
				h.ServeHTTP(last, req)
			}
			if last.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", last.Code, tc.status, last.Body)
			}
			if !strings.Contains(last.Body.String(), tc.want) {
				t.Fatalf("answer %s does not hold %s", last.Body, tc.want)
			}
			var a answer
			if err := json.Unmarshal(last.Body.Bytes(), &a); err != nil {
				t.Fatalf("answer is not JSON: %s", last.Body)
			}
			if tc.status == 405 && last.Header().Get("Allow") != "POST" {
				t.Fatalf("405 without Allow: POST")
			}
			if tc.status == 401 && last.Header().Get("WWW-Authenticate") == "" {
				t.Fatalf("401 without WWW-Authenticate")
			}
			got := map[string]int{}
			for name, records := range store.stored {
				got[name] = len(records)
			}
			if len(got) != len(tc.records) {
				t.Fatalf("stored %v, want %v", got, tc.records)
			}
			for name, n := range tc.records {
				if got[name] != n {
					t.Fatalf("stored %v, want %v", got, tc.records)
				}
			}
			if notify.pushes != tc.pushes || strings.Join(notify.events, ",") != strings.Join(tc.events, ",") {
				t.Fatalf("pushes %d and events %v, want %d and %v", notify.pushes, notify.events, tc.pushes, tc.events)
			}
		})
	}
}

func TestConfigMapName(t *testing.T) {
	if got := ConfigMapName("netbox"); got != "netbox-push" {
		t.Fatalf("ConfigMapName(netbox) = %s", got)
	}
	long := strings.Repeat("a", 250)
	got := ConfigMapName(long)
	if len(got) > 253 || !strings.HasSuffix(got, "-push") || got == ConfigMapName(strings.Repeat("a", 251)) {
		t.Fatalf("ConfigMapName of a 250-character name: %s (%d characters)", got, len(got))
	}
}
