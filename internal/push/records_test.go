package push

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gnmic-operator/gnmic-operator/internal/inventory"
)

func keysOf(t *testing.T, records []Record, field string) []string {
	t.Helper()
	keys := make([]string, 0, len(records))
	for _, r := range records {
		k, err := Key(r, field)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	return keys
}

func TestParseSnapshot(t *testing.T) {
	cases := []struct {
		name   string
		body   string
		keys   []string
		reason string
	}{
		{"an array of records", `[{"name":"a"},{"name":"b"}]`, []string{"a", "b"}, ""},
		{"the records envelope", ` {"records":[{"name":"a"}],"next":null}`, []string{"a"}, ""},
		{"an empty array empties the inventory", `[]`, []string{}, ""},
		{"numeric keys as NetBox ids", `[{"id":7,"name":"a"}]`, nil, ""},
		{"null", `null`, nil, "JSON array of records"},
		{"an object without records", `{"results":[]}`, nil, `needs a "records" array`},
		{"a record that is not an object", `[{"name":"a"},"b"]`, nil, "record 1: invalid body: a record must be a JSON object"},
		{"a record without its key", `[{"name":"a"},{"address":"x"}]`, nil, `record 1: invalid body: the record has no key field "name"`},
		{"an empty key", `[{"name":""}]`, nil, "is empty"},
		{"a key that is an object", `[{"name":{"first":"a"}}]`, nil, "neither a string nor a number"},
		{"two records of one key", `[{"name":"a"},{"name":"b"},{"name":"a"}]`, nil, `records 0 and 2 have the same name "a"`},
		{"truncated JSON", `[{"name":"a"},{"na`, nil, "invalid body: snapshot"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			field := "name"
			if strings.Contains(tc.body, `"id"`) {
				field = "id"
			}
			records, err := ParseSnapshot([]byte(tc.body), field, 0)
			if tc.reason != "" {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.reason) {
					t.Fatalf("error %v, want ErrInvalid saying %q", err, tc.reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.keys != nil && fmt.Sprint(keysOf(t, records, field)) != fmt.Sprint(tc.keys) {
				t.Fatalf("keys %v, want %v", keysOf(t, records, field), tc.keys)
			}
			if field == "id" && keysOf(t, records, field)[0] != "7" {
				t.Fatalf("numeric key %v, want 7", keysOf(t, records, field))
			}
		})
	}
}

func TestParseDelta(t *testing.T) {
	cases := []struct {
		name   string
		body   string
		reason string
	}{
		{"upserts and deletes", `{"upsert":[{"name":"a"}],"delete":["b"]}`, ""},
		{"deletes only", `{"delete":["b"]}`, ""},
		{"nothing to do", `{}`, `needs "upsert" or "delete"`},
		{"a misspelt field", `{"deletes":["b"]}`, `unknown field "deletes"`},
		{"an upsert without key", `{"upsert":[{"address":"x"}]}`, "upsert 0: invalid body: the record has no key field"},
		{"a key upserted twice", `{"upsert":[{"name":"a"},{"name":"a"}]}`, "upserted twice"},
		{"a key upserted and deleted", `{"upsert":[{"name":"a"}],"delete":["a"]}`, "both upserted and deleted"},
		{"a snapshot is not a delta", `[{"name":"a"}]`, "invalid body: delta"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseDelta([]byte(tc.body), "name", 0)
			if tc.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("error %v, want ErrInvalid saying %q", err, tc.reason)
			}
		})
	}
}

func TestApply(t *testing.T) {
	stored := []Record{Record(`{"name":"a","v":1}`), Record(`{"name":"b","v":1}`), Record(`{"name":"c","v":1}`)}
	cases := []struct {
		name    string
		delta   string
		want    string
		result  DeltaResult
		storedV string
	}{
		{"an upsert of a stored key replaces it in place", `{"upsert":[{"name":"b","v":2}]}`,
			`[{"name":"a","v":1},{"name":"b","v":2},{"name":"c","v":1}]`, DeltaResult{Replaced: 1}, ""},
		{"an upsert of a new key appends it", `{"upsert":[{"name":"d","v":1}]}`,
			`[{"name":"a","v":1},{"name":"b","v":1},{"name":"c","v":1},{"name":"d","v":1}]`, DeltaResult{Added: 1}, ""},
		{"a delete removes the key", `{"delete":["a","c"]}`, `[{"name":"b","v":1}]`, DeltaResult{Deleted: 2}, ""},
		{"a delete of an unknown key is counted missing", `{"delete":["x"]}`,
			`[{"name":"a","v":1},{"name":"b","v":1},{"name":"c","v":1}]`, DeltaResult{Missing: 1}, ""},
		{"a key deleted twice is deleted once", `{"delete":["a","a"]}`,
			`[{"name":"b","v":1},{"name":"c","v":1}]`, DeltaResult{Deleted: 1, Missing: 1}, ""},
		{"everything at once", `{"upsert":[{"name":"d","v":1},{"name":"a","v":3}],"delete":["b"]}`,
			`[{"name":"a","v":3},{"name":"c","v":1},{"name":"d","v":1}]`, DeltaResult{Added: 1, Replaced: 1, Deleted: 1}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := ParseDelta([]byte(tc.delta), "name", 0)
			if err != nil {
				t.Fatal(err)
			}
			before, _ := json.Marshal(stored)
			got, res, err := Apply(stored, d, "name")
			if err != nil {
				t.Fatal(err)
			}
			gotJSON, _ := json.Marshal(got)
			if string(gotJSON) != tc.want {
				t.Fatalf("got %s, want %s", gotJSON, tc.want)
			}
			if res != tc.result {
				t.Fatalf("result %+v, want %+v", res, tc.result)
			}
			if after, _ := json.Marshal(stored); string(after) != string(before) {
				t.Fatalf("the stored snapshot changed: %s", after)
			}
		})
	}
}

// A delta applied twice leaves what it left once: a replayed delta does no harm.
func TestApplyIsIdempotent(t *testing.T) {
	stored := []Record{Record(`{"name":"a"}`), Record(`{"name":"b"}`)}
	d := Delta{Upsert: []Record{Record(`{"name":"c"}`), Record(`{"name":"a","x":1}`)}, Delete: []string{"b"}}
	once, _, err := Apply(stored, d, "name")
	if err != nil {
		t.Fatal(err)
	}
	twice, res, err := Apply(once, d, "name")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(once)
	b, _ := json.Marshal(twice)
	if string(a) != string(b) {
		t.Fatalf("once %s, twice %s", a, b)
	}
	if res.Added != 0 || res.Missing != 1 {
		t.Fatalf("second application %+v: want nothing added and the delete missing", res)
	}
}

func TestEncodeDecode(t *testing.T) {
	records := []Record{Record(`{"name":"a", "v": 1}`), Record(`{"name":"b"}`)}
	s, err := Encode(records)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(s.Compressed, inventory.Budget{MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || string(got[0]) != `{"name":"a","v":1}` {
		t.Fatalf("decoded %s", got)
	}
	again, _ := Encode(got)
	if again.Digest != s.Digest || s.Records != 2 {
		t.Fatalf("digest %s after a round trip, %s before (records %d)", again.Digest, s.Digest, s.Records)
	}
	changed, _ := Encode([]Record{Record(`{"name":"a","v":2}`), Record(`{"name":"b"}`)})
	if changed.Digest == s.Digest {
		t.Fatal("a changed record left the digest as it was")
	}
	if _, err := Decode(s.Compressed, inventory.Budget{MaxBytes: 10}); err == nil || !strings.Contains(err.Error(), "more than 10 bytes") {
		t.Fatalf("a snapshot beyond the limit decoded: %v", err)
	}
	empty, _ := Encode(nil)
	if got, err := Decode(empty.Compressed, inventory.Budget{MaxBytes: 100}); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("empty snapshot decoded as %v, %v", got, err)
	}
}
