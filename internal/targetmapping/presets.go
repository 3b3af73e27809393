package targetmapping

// Expressions are a mapping's CEL expressions; an empty one takes the preset's, then the default's.
type Expressions struct {
	Expand, Include, Name, Address, Profile, Labels, Tags string
}

// Preset names.
const (
	PresetNetBox = "netbox"
	PresetHTTPSD = "httpSD"
	PresetConsul = "consul"
)

// defaults are the expressions without a preset: a record {"name": ..., "address": ...} is a Target.
var defaults = Expressions{
	Include: "true",
	Name:    "targetName(record.name)",
	Address: "record.address",
	Profile: "''",
	Labels:  "{}",
	Tags:    "{}",
}

// Presets are the expressions each preset stands for.
var Presets = map[string]Expressions{
	// NetBox's /api/dcim/devices/: devices with a name and a primary IP, named after the device, at their primary
	// IPv4 address (else the primary IP), the site, role, platform and tags as labels, the profile from the
	// custom field gnmic_profile when it is set.
	PresetNetBox: {
		Include: `has(record.name) && record.name != null && record.name != '' && ` +
			`((has(record.primary_ip4) && record.primary_ip4 != null) || (has(record.primary_ip) && record.primary_ip != null))`,
		Name:    `targetName(record.name)`,
		Address: `(has(record.primary_ip4) && record.primary_ip4 != null ? record.primary_ip4 : record.primary_ip).address.split('/')[0]`,
		Profile: `has(record.custom_fields) && record.custom_fields != null && has(record.custom_fields.gnmic_profile) ? record.custom_fields.gnmic_profile : ''`,
		Labels: `[{` +
			`"site": has(record.site) && record.site != null ? record.site.slug : null, ` +
			`"role": has(record.role) && record.role != null ? record.role.slug : (has(record.device_role) && record.device_role != null ? record.device_role.slug : null), ` +
			`"platform": has(record.platform) && record.platform != null ? record.platform.slug : null` +
			`}] + (has(record.tags) && record.tags != null ? record.tags.map(t, {"tag-" + t.slug: "true"}) : [])`,
		Tags: `{}`,
	},
	// Prometheus http_sd: a list of groups {"targets": ["host:port", ...], "labels": {...}}; one Target per
	// target, named after its address, with the group's labels but those starting with __.
	PresetHTTPSD: {
		Expand:  `record.targets.map(t, {"address": t, "labels": has(record.labels) && record.labels != null ? record.labels : {}})`,
		Include: `true`,
		Name:    `targetName(record.address)`,
		Address: `record.address`,
		Profile: `''`,
		Labels:  `record.labels.filter(k, !k.startsWith('__')).map(k, {k: record.labels[k]})`,
		Tags:    `{}`,
	},
	// Consul's catalog (the records of internal/inventory's Consul): one Target per service instance, named
	// after its node when the instance's ID is the service's name (one instance per node: devices registered
	// as external nodes), else after the instance's ID; at the instance's address and port; the profile from
	// the service metadata gnmic_profile when it is set; the node metadata keys of spec.consul.nodeMetaLabels
	// as labels.
	PresetConsul: {
		Include: `true`,
		Name:    `targetName(record.serviceID == record.service ? record.node : record.serviceID)`,
		Address: `record.address`,
		Profile: `has(record.meta.gnmic_profile) ? record.meta.gnmic_profile : ''`,
		Labels:  `record.labels`,
		Tags:    `{}`,
	},
}

// resolved are the expressions a mapping runs: its own, else its preset's, else the defaults.
func resolved(preset string, own Expressions) Expressions {
	p := Presets[preset]
	pick := func(own, fromPreset, fallback string) string {
		switch {
		case own != "":
			return own
		case fromPreset != "":
			return fromPreset
		}
		return fallback
	}
	return Expressions{
		Expand:  pick(own.Expand, p.Expand, ""),
		Include: pick(own.Include, p.Include, defaults.Include),
		Name:    pick(own.Name, p.Name, defaults.Name),
		Address: pick(own.Address, p.Address, defaults.Address),
		Profile: pick(own.Profile, p.Profile, defaults.Profile),
		Labels:  pick(own.Labels, p.Labels, defaults.Labels),
		Tags:    pick(own.Tags, p.Tags, defaults.Tags),
	}
}
