package targetmapping

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gnmic-operator/gnmic-operator/internal/inventory"
)

// Target is what a record maps to: a Target's name, spec and labels.
type Target struct {
	Name    string
	Address string
	Profile string
	Labels  map[string]string
	Tags    map[string]string
}

// Invalid is a record that maps to no Target, and why.
type Invalid struct {
	// Record is the record's index in the snapshot.
	Record int
	// Name is the Target name it mapped to, when it got that far.
	Name   string
	Reason string
}

func (i Invalid) String() string {
	if i.Name != "" {
		return fmt.Sprintf("record %d (%s): %s", i.Record, i.Name, i.Reason)
	}
	return fmt.Sprintf("record %d: %s", i.Record, i.Reason)
}

// Result is what a snapshot maps to.
type Result struct {
	// Targets in the order of their records, one per name.
	Targets []Target
	// Skipped counts the (expanded) records include left out.
	Skipped int
	// Invalid records, in order.
	Invalid []Invalid
}

// DefaultWithin is the default of spec.sync.mappingTimeout: how long mapping every record of one sync may take.
const DefaultWithin = 30 * time.Second

// Map maps every record, within a deadline for them all (0: DefaultWithin). Two records that map to one name:
// the first keeps it, the second is invalid. Each expression is bounded on each record by its cost
// (costLimit); the deadline bounds them all together, so that an expression that runs to its cost on every
// record of a large inventory fails the sync (an *inventory.BudgetError) instead of holding it for hours. An
// error maps nothing.
func (m *Mapper) Map(ctx context.Context, records []inventory.Record, within time.Duration) (Result, error) {
	if within <= 0 {
		within = DefaultWithin
	}
	mapCtx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	res, err := m.mapAll(mapCtx, records)
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil:
		return Result{}, fmt.Errorf("map the records: %w", ctx.Err())
	}
	return Result{}, &inventory.BudgetError{Budget: "sync.mappingTimeout",
		Exceeded: fmt.Sprintf("mapping %d records took longer than %s (%s)", len(records), within, err)}
}

// mapAll maps every record until ctx ends; its error is where it stopped.
func (m *Mapper) mapAll(ctx context.Context, records []inventory.Record) (Result, error) {
	var res Result
	names := map[string]int{}
	for i, rec := range records {
		if ctx.Err() != nil {
			return Result{}, fmt.Errorf("stopped at record %d", i)
		}
		expanded, err := m.expand(ctx, rec)
		if err != nil {
			res.Invalid = append(res.Invalid, Invalid{Record: i, Reason: err.Error()})
			continue
		}
		for _, r := range expanded {
			t, included, err := m.mapOne(ctx, r)
			switch {
			case ctx.Err() != nil:
				// The expression was interrupted, not wrong: no record is called invalid for the deadline.
				return Result{}, fmt.Errorf("stopped at record %d", i)
			case err != nil:
				res.Invalid = append(res.Invalid, Invalid{Record: i, Name: t.Name, Reason: err.Error()})
				continue
			case !included:
				res.Skipped++
				continue
			}
			if first, dup := names[t.Name]; dup {
				res.Invalid = append(res.Invalid, Invalid{Record: i, Name: t.Name, Reason: fmt.Sprintf("record %d maps to the same name", first)})
				continue
			}
			names[t.Name] = i
			res.Targets = append(res.Targets, t)
		}
	}
	return res, nil
}

// expand is the records a record stands for: itself, or the list expand gives.
func (m *Mapper) expand(ctx context.Context, rec inventory.Record) ([]map[string]any, error) {
	prg, ok := m.programs["expand"]
	if !ok {
		return []map[string]any{rec}, nil
	}
	v, err := eval(ctx, prg, rec)
	if err != nil {
		return nil, fmt.Errorf("expand: %w", err)
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("expand gives %s, not a list of records", kind(v))
	}
	out := make([]map[string]any, 0, len(list))
	for j, item := range list {
		r, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("expand's item %d is %s, not a record", j, kind(item))
		}
		out = append(out, r)
	}
	return out, nil
}

// mapOne maps one (expanded) record; included is false when include left it out.
func (m *Mapper) mapOne(ctx context.Context, rec map[string]any) (t Target, included bool, err error) {
	inc, err := m.evalField(ctx, "include", rec)
	if err != nil {
		return t, false, err
	}
	if b, ok := inc.(bool); !ok {
		return t, false, fmt.Errorf("include gives %s, not a bool", kind(inc))
	} else if !b {
		return t, false, nil
	}
	if t.Name, err = m.stringField(ctx, "name", rec); err != nil {
		return t, true, err
	}
	if errs := validation.IsDNS1123Subdomain(t.Name); len(errs) > 0 {
		return t, true, fmt.Errorf("name %q is not a valid object name: %s (targetName() makes one)", t.Name, strings.Join(errs, "; "))
	}
	address, err := m.stringField(ctx, "address", rec)
	if err != nil {
		return t, true, err
	}
	if t.Address, err = withPort(address, m.m.DefaultPort); err != nil {
		return t, true, err
	}
	if t.Profile, err = m.stringField(ctx, "profile", rec); err != nil {
		return t, true, err
	}
	if t.Profile == "" {
		t.Profile = m.m.DefaultProfile
	}
	if t.Profile == "" {
		return t, true, fmt.Errorf("no profile: the profile expression gives none and mapping.defaults.profile is not set")
	}
	if err := m.allowed.check(t.Profile); err != nil {
		return t, true, err
	}
	labels, err := m.mapField(ctx, "labels", rec)
	if err != nil {
		return t, true, err
	}
	t.Labels = maps.Clone(m.m.DefaultLabels)
	if t.Labels == nil && len(labels) > 0 {
		t.Labels = map[string]string{}
	}
	maps.Copy(t.Labels, labels)
	if err := validLabels(t.Labels); err != nil {
		return t, true, err
	}
	if t.Tags, err = m.mapField(ctx, "tags", rec); err != nil {
		return t, true, err
	}
	if len(t.Tags) > 64 {
		return t, true, fmt.Errorf("tags: %d entries, a Target holds at most 64", len(t.Tags))
	}
	return t, true, nil
}

func (m *Mapper) evalField(ctx context.Context, field string, rec map[string]any) (any, error) {
	v, err := eval(ctx, m.programs[field], rec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	return v, nil
}

// stringField is an expression that gives a string; null gives "".
func (m *Mapper) stringField(ctx context.Context, field string, rec map[string]any) (string, error) {
	v, err := m.evalField(ctx, field, rec)
	if err != nil {
		return "", err
	}
	switch s := v.(type) {
	case nil:
		return "", nil
	case string:
		return s, nil
	}
	return "", fmt.Errorf("%s gives %s, not a string", field, kind(v))
}

// mapField is an expression that gives a map, or a list of maps merged in order, whose values are strings,
// numbers or bools; entries whose value is null or "" are left out.
func (m *Mapper) mapField(ctx context.Context, field string, rec map[string]any) (map[string]string, error) {
	v, err := m.evalField(ctx, field, rec)
	if err != nil {
		return nil, err
	}
	var parts []any
	switch x := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		parts = []any{x}
	case []any:
		parts = x
	default:
		return nil, fmt.Errorf("%s gives %s, not a map", field, kind(v))
	}
	var out map[string]string
	for j, p := range parts {
		mp, ok := p.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: item %d is %s, not a map", field, j, kind(p))
		}
		for k, val := range mp {
			var s string
			switch x := val.(type) {
			case nil:
				continue
			case string:
				s = x
			case bool:
				s = strconv.FormatBool(x)
			case float64:
				s = strconv.FormatFloat(x, 'f', -1, 64)
			default:
				return nil, fmt.Errorf("%s: %s is %s, not a string", field, k, kind(val))
			}
			if s == "" {
				continue
			}
			if out == nil {
				out = map[string]string{}
			}
			out[k] = s
		}
	}
	return out, nil
}

// validLabels checks that labels are valid Kubernetes labels.
func validLabels(labels map[string]string) error {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("label key %q: %s", k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(labels[k]); len(errs) > 0 {
			return fmt.Errorf("label %s value %q: %s", k, labels[k], strings.Join(errs, "; "))
		}
	}
	return nil
}

// addressPattern is the Target CRD's rule for spec.address.
var addressPattern = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]):[0-9]{1,5}$`)

// withPort is address as host:port: an address without a port gets port (an IPv6 address in brackets).
func withPort(address string, port int) (string, error) {
	if address == "" {
		return "", fmt.Errorf("no address")
	}
	if ip, err := netip.ParseAddr(address); err == nil && ip.Is6() {
		address = "[" + address + "]:" + strconv.Itoa(port)
	} else if !strings.Contains(address, ":") || (strings.HasPrefix(address, "[") && strings.HasSuffix(address, "]")) {
		address = address + ":" + strconv.Itoa(port)
	}
	if !addressPattern.MatchString(address) {
		return "", fmt.Errorf("address %q is not host:port", address)
	}
	p, _ := strconv.Atoi(address[strings.LastIndex(address, ":")+1:])
	if p < 1 || p > 65535 {
		return "", fmt.Errorf("address %q: the port is not between 1 and 65535", address)
	}
	return address, nil
}

var valueType = reflect.TypeFor[*structpb.Value]()

// eval runs a program on a record and gives its result as plain Go values (as JSON decodes them). It stops
// when ctx ends (checked every 100 steps of a comprehension).
func eval(ctx context.Context, prg cel.Program, rec map[string]any) (any, error) {
	out, _, err := prg.ContextEval(ctx, map[string]any{"record": rec})
	if err != nil {
		return nil, err
	}
	return native(out)
}

func native(v ref.Val) (any, error) {
	if v == types.NullValue {
		return nil, nil
	}
	pb, err := v.ConvertToNative(valueType)
	if err != nil {
		return nil, fmt.Errorf("the result (%s) is not JSON: %w", v.Type(), err)
	}
	return pb.(*structpb.Value).AsInterface(), nil
}

// kind names the type of a result, with its article: "a map", "null".
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "a map"
	case []any:
		return "a list"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a bool"
	}
	return fmt.Sprintf("%T", v)
}
