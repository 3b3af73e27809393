package targetmapping_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/internal/targetmapping"
)

// The records are what internal/inventory's Consul provider makes of Consul's catalog (its test against a
// real agent checks that, and this preset on them, end to end: make test-consul).
func TestConsulPresetNamesInstancesAfterTheirNodeOrTheirOwnID(t *testing.T) {
	m := compile(t, targetmapping.Mapping{Preset: targetmapping.PresetConsul, DefaultProfile: "routers", AllowedProfiles: []string{"srl"}, DefaultPort: 9339,
		DefaultLabels: map[string]string{"source": "consul"}})
	res := mapRecords(t, m, records(t, "testdata/consul-instances.json", ""))
	want := []targetmapping.Target{
		{Name: "leaf1", Address: "10.0.0.1:57400", Profile: "srl", Labels: map[string]string{"source": "consul", "site": "ams1"}},
		{Name: "spine-1", Address: "[2001:db8::2]:6030", Profile: "routers", Labels: map[string]string{"source": "consul"}},
		{Name: "edge7", Address: "192.0.2.7:9339", Profile: "routers", Labels: map[string]string{"source": "consul", "site": "par1"}},
	}
	if !reflect.DeepEqual(res.Targets, want) {
		t.Errorf("targets:\n got %+v\nwant %+v", res.Targets, want)
	}
	// leaf1 runs gnmi and gnmi-tls: both instances are named leaf1, the second is invalid.
	if len(res.Invalid) != 1 || res.Invalid[0].Record != 3 || res.Invalid[0].Name != "leaf1" ||
		!strings.Contains(res.Invalid[0].Reason, "record 0 maps to the same name") {
		t.Errorf("invalid %v, want record 3 (leaf1's second service) named like record 0", res.Invalid)
	}
}
