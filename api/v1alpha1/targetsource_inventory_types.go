package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The pull and push inventories a TargetSource reads its records from (TargetSourceSpec.HTTP, .Push).

// HTTPInventory pulls the inventory from a JSON API. Each page is a JSON document; its records are the list at
// recordsField (or the document itself when it is a list), and the next page is the URL at
// pagination.nextField. With the netbox preset the defaults are NetBox's: results, next and count.
// +kubebuilder:validation:XValidation:rule="!has(self.tls) || !has(self.tls.insecureSkipVerify) || !self.tls.insecureSkipVerify || !has(self.tls.caRef)",message="tls.insecureSkipVerify and tls.caRef exclude each other: a CA is useless when verification is skipped"
type HTTPInventory struct {
	// URL of the first page, http:// or https://, for example https://netbox.example.com/api/dcim/devices/?limit=1000.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self.matches('^https?://[^/?#]+')",message="url must be an absolute http:// or https:// URL"
	// +required
	URL string `json:"url"`

	// Auth is sent with every request: a token (Authorization: <scheme> <token>) or basic credentials, from a
	// Secret in the TargetSource's namespace.
	// +optional
	Auth *HTTPAuth `json:"auth,omitempty"`

	// Headers are added to every request, for example Accept: application/json; version=2.0 for Nautobot.
	// Authorization is set by auth and cannot be set here.
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.lowerAscii() != 'authorization')",message="set Authorization through auth, from a Secret"
	// +optional
	Headers map[string]string `json:"headers,omitempty"`

	// TLS verifies the inventory's certificate. Without it the system's CAs verify it.
	// +optional
	TLS *HTTPInventoryTLS `json:"tls,omitempty"`

	// RecordsField is the dotted path of the list of records in each page, for example results. Empty: the
	// page itself is the list (Prometheus http_sd), or the preset's (netbox: results).
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9_@$-]+([.][A-Za-z0-9_@$-]+)*$')",message="recordsField must be field names separated by dots, such as results or data.devices"
	// +optional
	RecordsField string `json:"recordsField,omitempty"`

	// Pagination follows a next link from page to page.
	// +optional
	Pagination *HTTPPagination `json:"pagination,omitempty"`

	// Interval between two syncs. At least 10s. (The defaults are written as Go writes durations, so that a
	// client that reads and writes the object back changes nothing.)
	// +kubebuilder:default="5m0s"
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) >= duration('10s')",message="interval must be a duration of at least 10s, such as 5m"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	Interval *metav1.Duration `json:"interval,omitempty"`

	// Timeout of one whole sync: every page, read to its end.
	// +kubebuilder:default="1m0s"
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+(\\\\.[0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) >= duration('1s') && duration(self) <= duration('30m')",message="timeout must be a duration from 1s to 30m, such as 60s"
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	Timeout *metav1.Duration `json:"timeout,omitempty"`

	// MaxPageBytes is the largest page body read; a larger page fails the sync.
	// +kubebuilder:default=67108864
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=1073741824
	// +optional
	MaxPageBytes int64 `json:"maxPageBytes,omitempty"`
}

// HTTPAuth is one way to authenticate to the inventory.
// +kubebuilder:validation:XValidation:rule="[has(self.token), has(self.basic)].filter(a, a).size() == 1",message="auth must set exactly one of token and basic"
type HTTPAuth struct {
	// Token sends Authorization: <scheme> <token>, the token read from a Secret's key.
	// +optional
	Token *HTTPTokenAuth `json:"token,omitempty"`

	// Basic sends HTTP basic credentials from a Secret with the keys username and password.
	// +optional
	Basic *HTTPBasicAuth `json:"basic,omitempty"`
}

// HTTPTokenAuth is a token in the Authorization header.
type HTTPTokenAuth struct {
	// SecretKeyRef names the Secret, in the TargetSource's namespace, and its key holding the token.
	// +required
	SecretKeyRef SecretKeyReference `json:"secretKeyRef"`

	// Scheme before the token: Bearer, or Token for NetBox's v1 API tokens.
	// +kubebuilder:default="Bearer"
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9!#$%&'*+.^_|~-]*$`
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Scheme string `json:"scheme,omitempty"`
}

// HTTPBasicAuth is HTTP basic authentication.
type HTTPBasicAuth struct {
	// SecretName names a Secret in the TargetSource's namespace with the keys username and password.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	SecretName string `json:"secretName"`
}

// HTTPInventoryTLS verifies the inventory's certificate.
type HTTPInventoryTLS struct {
	// CARef names the PEM CA bundle that verifies the inventory's certificate, instead of the system's CAs.
	// +optional
	CARef *CABundleReference `json:"caRef,omitempty"`

	// ServerName overrides the name verified in the inventory's certificate.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ServerName string `json:"serverName,omitempty"`

	// InsecureSkipVerify accepts any certificate. Off by default; use it only in labs.
	// +optional
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
}

// CABundleReference names one key of a Secret or of a ConfigMap in the same namespace that holds PEM CA
// certificates.
// +kubebuilder:validation:XValidation:rule="[has(self.secretKeyRef), has(self.configMapKeyRef)].filter(r, r).size() == 1",message="caRef must set exactly one of secretKeyRef and configMapKeyRef"
type CABundleReference struct {
	// SecretKeyRef names a Secret and its key, for example ca.crt.
	// +optional
	SecretKeyRef *SecretKeyReference `json:"secretKeyRef,omitempty"`
	// ConfigMapKeyRef names a ConfigMap and its key, for example ca.crt.
	// +optional
	ConfigMapKeyRef *ConfigMapKeyReference `json:"configMapKeyRef,omitempty"`
}

// ConfigMapKeyReference names one key of a ConfigMap in the same namespace.
type ConfigMapKeyReference struct {
	// Name of the ConfigMap.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Name string `json:"name"`
	// Key of the ConfigMap's data.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +required
	Key string `json:"key"`
}

// HTTPPagination follows the inventory's pages: each page names the next one (NetBox and Nautobot's next).
type HTTPPagination struct {
	// NextField is the dotted path, in each page, of the URL of the next page; the last page has none there
	// (null, an empty string or no field). A relative URL is resolved against the page's. Default with the
	// netbox preset: next.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9_@$-]+([.][A-Za-z0-9_@$-]+)*$')",message="nextField must be field names separated by dots, such as next or links.next"
	// +optional
	NextField string `json:"nextField,omitempty"`

	// CountField is the dotted path, in the first page, of the total number of records the inventory holds
	// (NetBox's count). When set, an answer with fewer records than it announced is truncated and changes
	// nothing. Default with the netbox preset: count.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9_@$-]+([.][A-Za-z0-9_@$-]+)*$')",message="countField must be field names separated by dots, such as count"
	// +optional
	CountField string `json:"countField,omitempty"`

	// MaxPages bounds the pages of one sync; an inventory with more fails the sync (it would otherwise look
	// truncated, or loop).
	// +kubebuilder:default=1000
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	// +optional
	MaxPages int32 `json:"maxPages,omitempty"`
}

// PushInventory is an inventory that posts its snapshots to the operator (docs/target-sources.md#push).
// +kubebuilder:validation:XValidation:rule="[has(self.auth.bearerTokenRef), has(self.auth.hmacSecretRef)].filter(a, a).size() == 1",message="push.auth must set exactly one of bearerTokenRef and hmacSecretRef"
type PushInventory struct {
	// Auth authenticates every post: a bearer token or an HMAC signature of the body, from a Secret.
	// +required
	Auth PushAuth `json:"auth"`

	// KeyField is the top-level field of a record whose value (a string or a number) identifies it: a delta
	// upserts and deletes records by it, and no two records of a snapshot may share it. For example name,
	// or id for NetBox devices.
	// +kubebuilder:default="name"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	KeyField string `json:"keyField,omitempty"`

	// MaxBodyBytes is the largest body accepted; a larger post is refused (413) before it is parsed. The
	// operator's --targetsource-push-max-body-bytes caps it.
	// +kubebuilder:default=16777216
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=268435456
	// +optional
	MaxBodyBytes int64 `json:"maxBodyBytes,omitempty"`
}

// PushAuth is how a post to the push endpoint proves it comes from the inventory.
type PushAuth struct {
	// BearerTokenRef names the Secret key holding the token a post sends as Authorization: Bearer <token>.
	// +optional
	BearerTokenRef *SecretKeyReference `json:"bearerTokenRef,omitempty"`

	// HMACSecretRef names the Secret key holding the key a post's body is signed with.
	// +optional
	HMACSecretRef *SecretKeyReference `json:"hmacSecretRef,omitempty"`
}

// Mapping presets: the expressions they stand for are in docs/target-sources.md.
const (
	// MappingPresetNetBox maps the devices of NetBox's /api/dcim/devices/.
	MappingPresetNetBox = "netbox"
	// MappingPresetHTTPSD maps Prometheus http_sd target groups: one Target per target.
	MappingPresetHTTPSD = "httpSD"
)
