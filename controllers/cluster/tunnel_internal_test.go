package cluster

import (
	"fmt"
	"testing"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/collector"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
)

func TestRuntimeOfKeepsDialInDevicesApartFromTheTargetsTheCollectorWasSent(t *testing.T) {
	running := gnmic.TargetStatus{State: gnmic.StateRunning}
	rt := runtimeOf([]gnmic.TargetState{
		{Name: "r1", State: running},
		{Name: "leaf-1", Config: gnmic.TargetStateConfig{TunnelType: "GNMI_GNOI"}, State: running},
	})
	if _, ok := rt.Targets["r1"]; !ok || len(rt.Targets) != 1 {
		t.Errorf("targets %v, want r1 alone: a device must not count as a pushed target (Settled, handover)", rt.Targets)
	}
	if d, ok := rt.Tunnel["leaf-1"]; !ok || d.Type != "GNMI_GNOI" || len(rt.Tunnel) != 1 {
		t.Errorf("tunnel %v, want leaf-1 of type GNMI_GNOI", rt.Tunnel)
	}
}

func TestReportTunnelTargetsListsAtMostTheBoundAndCountsThemAll(t *testing.T) {
	collecting := gnmic.TargetStatus{State: gnmic.StateRunning, ConnectionState: gnmic.ConnectionReady,
		Subscriptions: map[string]string{"s": gnmic.SubscriptionRunning}}
	rt := collector.Runtime{Known: true, Tunnel: map[string]collector.TunnelTarget{}}
	n := operatorv1alpha1.MaxTunnelTargetsListed + 5
	for i := range n {
		rt.Tunnel[fmt.Sprintf("leaf-%03d", i)] = collector.TunnelTarget{Type: "GNMI_GNOI", Status: collecting}
	}
	rt.Tunnel["leaf-000"] = collector.TunnelTarget{Type: "GNMI_GNOI",
		Status: gnmic.TargetStatus{State: gnmic.StateFailed, FailedReason: "auth"}}
	w := &world{rendered: gnmic.Config{TunnelTargetMatches: map[string]gnmic.TunnelTargetMatch{"leaves": {ID: "^leaf-"}}}}
	unread := &podPush{status: operatorv1alpha1.CollectorStatus{Pod: "c-1", TunnelTargetsCount: 3}}
	pushed := pushResults{pods: map[int]*podPush{0: {status: operatorv1alpha1.CollectorStatus{Pod: "c-0"}}, 1: unread}}

	reportTunnelTargets(w, pushed, collectorRuntimes{0: rt})

	st := pushed.pods[0].status
	if st.TunnelTargetsCount != int32(n) || len(st.TunnelTargets) != operatorv1alpha1.MaxTunnelTargetsListed {
		t.Fatalf("count %d listed %d, want %d and %d", st.TunnelTargetsCount, len(st.TunnelTargets), n, operatorv1alpha1.MaxTunnelTargetsListed)
	}
	first := st.TunnelTargets[0]
	if first.ID != "leaf-000" || first.Collecting || first.State != "failed: auth" || first.Policy != "leaves" {
		t.Errorf("first listed %+v, want leaf-000 failed for auth, matched by leaves", first)
	}
	if unread.status.TunnelTargetsCount != 3 {
		t.Errorf("a pod whose collector was not read keeps what its status said, got %d", unread.status.TunnelTargetsCount)
	}
}
