package harness

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestOperatorRequestsCountsCompletedRequestsInTheWindowByKind(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.log")
	lines := `{"verb":"update","requestURI":"/apis/coordination.k8s.io/v1/namespaces/x/leases/a","objectRef":{"resource":"leases"},"stageTimestamp":"2026-01-01T00:00:00.500000Z"}
{"verb":"update","requestURI":"/apis/coordination.k8s.io/v1/namespaces/x/leases/a","objectRef":{"resource":"leases"},"stageTimestamp":"2026-01-01T00:00:01.000000Z"}
{"verb":"patch","requestURI":"/apis/operator.gnmic.dev/v1alpha1/namespaces/x/clusters/c/status","objectRef":{"resource":"clusters","subresource":"status"},"stageTimestamp":"2026-01-01T00:00:01.200000Z"}
{"verb":"get","requestURI":"/apis","stageTimestamp":"2026-01-01T00:00:01.300000Z"}
{"verb":"update","requestURI":"/apis/coordination.k8s.io/v1/namespaces/x/leases/a","objectRef":{"resource":"leases"},"stageTimestamp":"2026-01-01T00:00:02.000000Z"}
`
	if err := os.WriteFile(log, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	cp := &ControlPlane{auditLog: log}
	from := time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC)
	got, err := cp.OperatorRequests(from, from.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	want := map[APIRequest]int{"update leases": 1, "patch clusters/status": 1, "get /apis": 1}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if _, err := (&ControlPlane{}).OperatorRequests(from, from); err == nil {
		t.Fatal("a control plane without an audit log counted requests")
	}
}
