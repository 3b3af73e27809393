package gnmic

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestTargetsSendGRPCKeepaliveWithGNMIcKeys(t *testing.T) {
	c := Config{Targets: map[string]TargetConfig{"r": {
		Address:       "a:1",
		GRPCKeepalive: &GRPCKeepaliveConfig{Time: "30s", Timeout: "10s", PermitWithoutStream: true},
	}}}
	body, err := c.body()
	if err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		Targets map[string]map[string]json.RawMessage `json:"targets"`
	}
	if err := json.Unmarshal(body, &decoded); err != nil {
		t.Fatal(err)
	}
	want := `{"time":"30s","timeout":"10s","permit-without-stream":true}`
	if got := string(decoded.Targets["r"]["grpc-keepalive"]); got != want {
		t.Fatalf("grpc-keepalive = %s, want %s", got, want)
	}
}

func TestTargetsWithoutGRPCKeepaliveSendNone(t *testing.T) {
	body, err := Config{Targets: map[string]TargetConfig{"r": {Address: "a:1"}}}.body()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(body), "grpc-keepalive") {
		t.Fatalf("body %s sends a grpc-keepalive nobody asked for", body)
	}
}

func TestNormalizeDoesNotShareGRPCKeepaliveWithItsInput(t *testing.T) {
	in := Config{Targets: map[string]TargetConfig{"r": {Address: "a:1", GRPCKeepalive: &GRPCKeepaliveConfig{Time: "30s"}}}}
	n := in.Normalize()
	n.Targets["r"].GRPCKeepalive.Time = "1s"
	if got := in.Targets["r"].GRPCKeepalive.Time; got != "30s" {
		t.Fatalf("Normalize shares grpc-keepalive with its input: input time is now %q", got)
	}
}

// The collector's apply decoder has no hook for history's time.Time values:
// any history refuses the whole apply with 400, so the wire model must not
// be able to carry one.
func TestSubscriptionsCannotCarryHistory(t *testing.T) {
	typ := reflect.TypeFor[SubscriptionConfig]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name == "history" {
			t.Fatalf("SubscriptionConfig.%s is sent as history, which the collector refuses", typ.Field(i).Name)
		}
	}
}

func TestTargetNamesAreSorted(t *testing.T) {
	cfg := Config{Targets: map[string]TargetConfig{"r2": {}, "r10": {}, "r1": {}}}
	if got, want := cfg.TargetNames(), []string{"r1", "r10", "r2"}; !slices.Equal(got, want) {
		t.Errorf("TargetNames = %v, want %v", got, want)
	}
	if got := (Config{}).TargetNames(); len(got) != 0 {
		t.Errorf("TargetNames of an empty configuration = %v", got)
	}
}
