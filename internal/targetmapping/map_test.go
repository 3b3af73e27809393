package targetmapping_test

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gnmic-operator/gnmic-operator/internal/inventory"
	"github.com/gnmic-operator/gnmic-operator/internal/targetmapping"
)

func records(t *testing.T, file, field string) []inventory.Record {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if field != "" {
		doc = doc.(map[string]any)[field]
	}
	var out []inventory.Record
	for _, r := range doc.([]any) {
		out = append(out, r.(map[string]any))
	}
	return out
}

func compile(t *testing.T, m targetmapping.Mapping) *targetmapping.Mapper {
	t.Helper()
	mapper, err := targetmapping.Compile(m)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return mapper
}

func TestNetBoxPresetMapsDevicesWithAPrimaryIP(t *testing.T) {
	m := compile(t, targetmapping.Mapping{Preset: targetmapping.PresetNetBox, DefaultProfile: "default", AllowedProfiles: []string{"arista"},
		DefaultLabels: map[string]string{"source": "netbox", "site": "overridden"}})
	res := mapRecords(t, m, records(t, "testdata/netbox-devices.json", "results"))
	want := []targetmapping.Target{
		{Name: "leaf1.dc1", Address: "10.0.0.1:57400", Profile: "default",
			Labels: map[string]string{"source": "netbox", "site": "dc1", "role": "leaf", "platform": "srlinux", "tag-core": "true", "tag-lab": "true"}},
		{Name: "spine1.dc1", Address: "[2001:db8::1]:57400", Profile: "arista",
			Labels: map[string]string{"source": "netbox", "site": "dc1", "role": "spine"}},
	}
	if !reflect.DeepEqual(res.Targets, want) {
		t.Errorf("targets:\n got %+v\nwant %+v", res.Targets, want)
	}
	if res.Skipped != 1 || len(res.Invalid) != 0 {
		t.Errorf("skipped %d (want 1: the patch panel has no IP), invalid %v", res.Skipped, res.Invalid)
	}
}

func TestHTTPSDPresetMakesOneTargetPerTarget(t *testing.T) {
	m := compile(t, targetmapping.Mapping{Preset: targetmapping.PresetHTTPSD, DefaultProfile: "p"})
	res := mapRecords(t, m, records(t, "testdata/http-sd.json", ""))
	want := []targetmapping.Target{
		{Name: "10.0.1.1-57400", Address: "10.0.1.1:57400", Profile: "p", Labels: map[string]string{"role": "leaf"}},
		{Name: "10.0.1.2-57400", Address: "10.0.1.2:57400", Profile: "p", Labels: map[string]string{"role": "leaf"}},
		{Name: "spine1.dc1-6030", Address: "spine1.dc1:6030", Profile: "p", Labels: map[string]string{"role": "spine"}},
	}
	if !reflect.DeepEqual(res.Targets, want) || len(res.Invalid) != 0 {
		t.Errorf("targets:\n got %+v\nwant %+v\ninvalid %v", res.Targets, want, res.Invalid)
	}
}

func TestCustomExpressionsReplaceThePresetsOneByOne(t *testing.T) {
	m := compile(t, targetmapping.Mapping{Preset: targetmapping.PresetNetBox, DefaultProfile: "default", AllowedProfiles: []string{"arista"},
		Expressions: targetmapping.Expressions{
			Name: `targetName(record.site.slug + "-" + record.name)`,
			Tags: `{"site": record.site.slug, "id": record.id}`,
		}})
	res := mapRecords(t, m, records(t, "testdata/netbox-devices.json", "results"))
	if len(res.Targets) != 2 || res.Targets[0].Name != "dc1-leaf1.dc1" || res.Targets[0].Address != "10.0.0.1:57400" {
		t.Fatalf("targets %+v", res.Targets)
	}
	if got := res.Targets[0].Tags; !reflect.DeepEqual(got, map[string]string{"site": "dc1", "id": "1"}) {
		t.Errorf("tags %v", got)
	}
}

func TestMapReportsInvalidRecordsAndMapsTheOthers(t *testing.T) {
	m := compile(t, targetmapping.Mapping{DefaultProfile: "p",
		Expressions: targetmapping.Expressions{Labels: `has(record.labels) ? record.labels : {}`}})
	recs := []inventory.Record{
		{"name": "ok", "address": "10.0.0.1"},
		{"name": "no-address"},
		{"name": "bad-port", "address": "10.0.0.1:70000"},
		{"name": "ok", "address": "10.0.0.2"},
		{"name": 7, "address": "10.0.0.3"},
		{"name": "bad-label", "address": "10.0.0.4", "labels": map[string]any{"a b": "x"}},
		{"name": "", "address": "10.0.0.5"},
	}
	res := mapRecords(t, m, recs)
	if len(res.Targets) != 1 || res.Targets[0].Name != "ok" || res.Targets[0].Address != "10.0.0.1:57400" {
		t.Fatalf("targets %+v", res.Targets)
	}
	wantReasons := []string{"no such key: address", "not between 1 and 65535", "record 0 maps to the same name", "targetName", "label key", "not a valid object name"}
	if len(res.Invalid) != len(wantReasons) {
		t.Fatalf("invalid %v", res.Invalid)
	}
	for i, want := range wantReasons {
		if !strings.Contains(res.Invalid[i].String(), want) {
			t.Errorf("invalid[%d] = %q, want it to say %q", i, res.Invalid[i], want)
		}
	}
}

func TestMapWithoutAProfileIsInvalid(t *testing.T) {
	m := compile(t, targetmapping.Mapping{})
	res := mapRecords(t, m, []inventory.Record{{"name": "a", "address": "10.0.0.1:1"}})
	if len(res.Targets) != 0 || len(res.Invalid) != 1 || !strings.Contains(res.Invalid[0].Reason, "no profile") {
		t.Errorf("got %+v", res)
	}
}

func TestCompileNamesEveryBadExpression(t *testing.T) {
	_, err := targetmapping.Compile(targetmapping.Mapping{Expressions: targetmapping.Expressions{
		Name: "record.name +", Labels: "{'a': undefinedVar}"}})
	var ce *targetmapping.CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("err %v is no CompileError", err)
	}
	msg := err.Error()
	for _, want := range []string{`mapping.name "record.name +"`, `mapping.labels "{'a': undefinedVar}"`, "undeclared reference"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
}

func TestAnExpressionThatCostsTooMuchFailsItsRecordOnly(t *testing.T) {
	m := compile(t, targetmapping.Mapping{DefaultProfile: "p", Expressions: targetmapping.Expressions{
		Tags: `{"x": string(lists.range(100000).map(i, lists.range(100).map(j, i*j)).size())}`}})
	res := mapRecords(t, m, []inventory.Record{{"name": "a", "address": "h"}})
	if len(res.Invalid) != 1 || !strings.Contains(res.Invalid[0].Reason, "cost") {
		t.Errorf("got %+v", res)
	}
}

func TestTargetName(t *testing.T) {
	for in, want := range map[string]string{
		"Leaf 1/DC1":     "leaf-1-dc1",
		"10.0.0.1:57400": "10.0.0.1-57400",
		"--edge--":       "edge",
		"a..b.-c":        "a.b.c",
		"émoji✓router":   "moji-router",
		"":               "",
	} {
		if got := targetmapping.TargetName(in); got != want {
			t.Errorf("TargetName(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzTargetNameIsAValidNameOrEmpty(f *testing.F) {
	for _, s := range []string{"Leaf 1", "a..b", strings.Repeat("x", 300), "-.-", "[2001:db8::1]:57400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name := targetmapping.TargetName(s)
		if name == "" {
			return
		}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			t.Errorf("TargetName(%q) = %q: %v", s, name, errs)
		}
	})
}

// The generic CMDB example of docs/target-sources.md, as written there.
func TestTheDocsCMDBExampleMapsAsDocumented(t *testing.T) {
	m := compile(t, targetmapping.Mapping{AllowedProfiles: []string{"arista-eos", "default"}, Expressions: targetmapping.Expressions{
		Include: `!record.decommissioned`,
		Name:    `targetName(record.hostname)`,
		Address: `record.mgmt.ip + ':' + string(int(record.mgmt.port))`,
		Profile: `record.vendor == 'arista' ? 'arista-eos' : 'default'`,
		Labels:  `{"vendor": record.vendor, "city": record.hostname.split(".")[1].lowerAscii()}`,
		Tags:    `{"hostname": record.hostname}`,
	}})
	var recs []inventory.Record
	if err := json.Unmarshal([]byte(`[
		{"hostname": "R1.Paris", "mgmt": {"ip": "192.0.2.1", "port": 6030}, "vendor": "arista", "decommissioned": false},
		{"hostname": "R2.Paris", "mgmt": {"ip": "192.0.2.2", "port": 6030}, "vendor": "arista", "decommissioned": true}]`), &recs); err != nil {
		t.Fatal(err)
	}
	res := mapRecords(t, m, recs)
	want := []targetmapping.Target{{Name: "r1.paris", Address: "192.0.2.1:6030", Profile: "arista-eos",
		Labels: map[string]string{"vendor": "arista", "city": "paris"}, Tags: map[string]string{"hostname": "R1.Paris"}}}
	if !reflect.DeepEqual(res.Targets, want) || res.Skipped != 1 || len(res.Invalid) != 0 {
		t.Errorf("got %+v", res)
	}
}

func TestOptionalFieldsReadWithDefaults(t *testing.T) {
	m := compile(t, targetmapping.Mapping{DefaultProfile: "p", Expressions: targetmapping.Expressions{
		Labels: `{"platform": record.?platform.?slug.orValue('none'), "port": string(record.port)}`,
	}})
	res := mapRecords(t, m, []inventory.Record{{"name": "a", "address": "h", "port": 6030.0}, {"name": "b", "address": "h", "platform": map[string]any{"slug": "eos"}, "port": 1.0}})
	if len(res.Targets) != 2 || res.Targets[0].Labels["platform"] != "none" || res.Targets[1].Labels["platform"] != "eos" || res.Targets[0].Labels["port"] != "6030" {
		t.Errorf("got %+v", res)
	}
}
