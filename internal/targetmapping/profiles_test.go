package targetmapping_test

import (
	"strings"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/internal/inventory"
	"github.com/gnmic-operator/gnmic-operator/internal/targetmapping"
)

// netboxDevice is a NetBox device whose custom field gnmic_profile is profile (none when nil).
func netboxDevice(profile any) inventory.Record {
	fields := map[string]any{}
	if profile != nil {
		fields["gnmic_profile"] = profile
	}
	return inventory.Record{"name": "leaf1", "primary_ip4": map[string]any{"address": "10.0.0.1/24"}, "custom_fields": fields}
}

// consulInstance is a Consul instance whose service metadata gnmic_profile is profile (none when "").
func consulInstance(profile string) inventory.Record {
	meta := map[string]any{}
	if profile != "" {
		meta["gnmic_profile"] = profile
	}
	return inventory.Record{"node": "leaf1", "service": "gnmi", "serviceID": "gnmi", "address": "10.0.0.1:57400",
		"meta": meta, "labels": map[string]any{}}
}

// record is a record of the default mapping whose field profile the mapping reads.
func record(profile string) inventory.Record {
	return inventory.Record{"name": "leaf1", "address": "10.0.0.1", "profile": profile}
}

func TestARecordMayChooseOnlyAnAllowedProfile(t *testing.T) {
	fromRecord := targetmapping.Expressions{Profile: "record.profile"}
	for _, tc := range []struct {
		name    string
		mapping targetmapping.Mapping
		record  inventory.Record
		// wantProfile is the Target's profile; wantInvalid, when set, is what the reason of the invalid record
		// says instead.
		wantProfile string
		wantInvalid []string
	}{
		{name: "keeps a profile allowedProfiles lists",
			mapping: targetmapping.Mapping{Expressions: fromRecord, DefaultProfile: "routers", AllowedProfiles: []string{"srl", "eos"}},
			record:  record("eos"), wantProfile: "eos"},
		{name: "refuses a profile allowedProfiles does not list, naming the profile, the field and what is allowed",
			mapping:     targetmapping.Mapping{Expressions: fromRecord, DefaultProfile: "routers", AllowedProfiles: []string{"srl", "eos"}},
			record:      record("admin"),
			wantInvalid: []string{`record 0 (leaf1): profile "admin" is not in mapping.allowedProfiles (allowed: eos, routers, srl)`}},
		{name: "always allows defaults.profile, chosen by the record or given for none",
			mapping: targetmapping.Mapping{Expressions: fromRecord, DefaultProfile: "routers", AllowedProfiles: []string{"srl"}},
			record:  record("routers"), wantProfile: "routers"},
		{name: "gives defaults.profile to a record that chooses none",
			mapping: targetmapping.Mapping{Expressions: fromRecord, DefaultProfile: "routers"},
			record:  record(""), wantProfile: "routers"},
		{name: "allows only defaults.profile without allowedProfiles",
			mapping:     targetmapping.Mapping{Expressions: fromRecord, DefaultProfile: "routers"},
			record:      record("srl"),
			wantInvalid: []string{`profile "srl" is not in mapping.allowedProfiles (allowed: routers)`}},
		{name: "allows no profile without allowedProfiles and defaults.profile",
			mapping:     targetmapping.Mapping{Expressions: fromRecord},
			record:      record("srl"),
			wantInvalid: []string{`profile "srl" is not in mapping.allowedProfiles (allowed: none: mapping.allowedProfiles is empty and mapping.defaults.profile is not set)`}},
		{name: "allows a profile of allowedProfiles without defaults.profile",
			mapping: targetmapping.Mapping{Expressions: fromRecord, AllowedProfiles: []string{"srl"}},
			record:  record("srl"), wantProfile: "srl"},
		{name: "takes * for a name, not a wildcard",
			mapping: targetmapping.Mapping{Expressions: fromRecord, AllowedProfiles: []string{"*"}},
			record:  record("srl"), wantInvalid: []string{`profile "srl" is not in mapping.allowedProfiles (allowed: *)`}},
		{name: "compares names exactly: case and surrounding spaces count",
			mapping: targetmapping.Mapping{Expressions: fromRecord, AllowedProfiles: []string{"srl"}},
			record:  record("SRL "), wantInvalid: []string{`profile "SRL " is not in mapping.allowedProfiles`}},
		{name: "checks a profile the mapping's own expression gives, not only the inventory's",
			mapping: targetmapping.Mapping{Expressions: targetmapping.Expressions{Profile: "'arista-eos'"}, DefaultProfile: "routers"},
			record:  record(""), wantInvalid: []string{`profile "arista-eos" is not in mapping.allowedProfiles (allowed: routers)`}},
		{name: "names at most five allowed profiles and counts the others",
			mapping: targetmapping.Mapping{Expressions: fromRecord, DefaultProfile: "a", AllowedProfiles: []string{"g", "f", "e", "d", "c", "b"}},
			record:  record("x"), wantInvalid: []string{`(allowed: a, b, c, d, e and 2 more)`}},
		{name: "quotes a long profile from the inventory cut short",
			mapping:     targetmapping.Mapping{Expressions: fromRecord, DefaultProfile: "routers"},
			record:      record(strings.Repeat("x", 10_000)),
			wantInvalid: []string{`profile "` + strings.Repeat("x", 64) + `"... (10000 bytes) is not in mapping.allowedProfiles`}},

		{name: "netbox: keeps the gnmic_profile allowedProfiles lists",
			mapping: targetmapping.Mapping{Preset: targetmapping.PresetNetBox, DefaultProfile: "routers", AllowedProfiles: []string{"srl"}},
			record:  netboxDevice("srl"), wantProfile: "srl"},
		{name: "netbox: refuses a gnmic_profile allowedProfiles does not list",
			mapping:     targetmapping.Mapping{Preset: targetmapping.PresetNetBox, DefaultProfile: "routers", AllowedProfiles: []string{"srl"}},
			record:      netboxDevice("admin"),
			wantInvalid: []string{`record 0 (leaf1): profile "admin" is not in mapping.allowedProfiles (allowed: routers, srl)`}},
		{name: "netbox: refuses any gnmic_profile but defaults.profile without allowedProfiles",
			mapping: targetmapping.Mapping{Preset: targetmapping.PresetNetBox, DefaultProfile: "routers"},
			record:  netboxDevice("srl"), wantInvalid: []string{`profile "srl" is not in mapping.allowedProfiles (allowed: routers)`}},
		{name: "netbox: gives defaults.profile to a device whose gnmic_profile is null",
			mapping: targetmapping.Mapping{Preset: targetmapping.PresetNetBox, DefaultProfile: "routers"},
			record:  netboxDevice(nil), wantProfile: "routers"},
		{name: "consul: keeps the gnmic_profile allowedProfiles lists",
			mapping: targetmapping.Mapping{Preset: targetmapping.PresetConsul, DefaultProfile: "routers", AllowedProfiles: []string{"srl"}},
			record:  consulInstance("srl"), wantProfile: "srl"},
		{name: "consul: refuses a gnmic_profile allowedProfiles does not list",
			mapping:     targetmapping.Mapping{Preset: targetmapping.PresetConsul, DefaultProfile: "routers", AllowedProfiles: []string{"srl"}},
			record:      consulInstance("admin"),
			wantInvalid: []string{`record 0 (leaf1): profile "admin" is not in mapping.allowedProfiles (allowed: routers, srl)`}},
		{name: "consul: refuses any gnmic_profile but defaults.profile without allowedProfiles",
			mapping: targetmapping.Mapping{Preset: targetmapping.PresetConsul, DefaultProfile: "routers"},
			record:  consulInstance("srl"), wantInvalid: []string{`profile "srl" is not in mapping.allowedProfiles (allowed: routers)`}},
		{name: "consul: gives defaults.profile to an instance without gnmic_profile",
			mapping: targetmapping.Mapping{Preset: targetmapping.PresetConsul, DefaultProfile: "routers"},
			record:  consulInstance(""), wantProfile: "routers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := mapRecords(t, compile(t, tc.mapping), []inventory.Record{tc.record})
			if tc.wantInvalid == nil {
				if len(res.Invalid) != 0 || len(res.Targets) != 1 || res.Targets[0].Profile != tc.wantProfile {
					t.Fatalf("got targets %+v, invalid %v; want one Target of profile %q", res.Targets, res.Invalid, tc.wantProfile)
				}
				return
			}
			if len(res.Targets) != 0 || len(res.Invalid) != 1 {
				t.Fatalf("got targets %+v, invalid %v; want no Target and one invalid record", res.Targets, res.Invalid)
			}
			for _, want := range tc.wantInvalid {
				if !strings.Contains(res.Invalid[0].String(), want) {
					t.Errorf("invalid record %q does not say %q", res.Invalid[0], want)
				}
			}
		})
	}
}

// A record refused for its profile does not hold its name: the next record of that name maps, as it would
// had the first never been there.
func TestARecordRefusedForItsProfileTakesNoName(t *testing.T) {
	m := compile(t, targetmapping.Mapping{Expressions: targetmapping.Expressions{Profile: "record.profile"}, DefaultProfile: "routers"})
	res := mapRecords(t, m, []inventory.Record{record("admin"), record("")})
	if len(res.Targets) != 1 || res.Targets[0].Profile != "routers" || len(res.Invalid) != 1 || res.Invalid[0].Record != 0 {
		t.Errorf("got targets %+v, invalid %v; want record 1's Target and record 0 invalid", res.Targets, res.Invalid)
	}
}
