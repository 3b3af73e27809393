package push

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/gnmic-operator/gnmic-operator/internal/inventory"
)

// ErrInvalid is the cause of every refusal of a body that is not a snapshot or a delta this package reads.
var ErrInvalid = errors.New("invalid body")

// Record is one inventory record as posted: a JSON object, kept as its bytes.
type Record = json.RawMessage

// Delta changes a stored snapshot: Upsert replaces the records of the same key or adds them, Delete removes
// the records of these keys. A key both upserted and deleted in one delta is refused: its outcome would
// depend on an order the sender may not mean.
type Delta struct {
	Upsert []Record `json:"upsert"`
	Delete []string `json:"delete"`
}

// ParseSnapshot reads a full snapshot, either a JSON array of records or {"records": [...]}, and checks that
// every record is an object with a unique key in keyField. It reads one record at a time and refuses more than
// maxRecords (0: inventory.DefaultMaxRecords) at the first too many, with an *inventory.BudgetError.
func ParseSnapshot(body []byte, keyField string, maxRecords int) ([]Record, error) {
	records, err := snapshotRecords(json.NewDecoder(bytes.NewReader(body)), maxRecords)
	if err != nil {
		if inventory.IsBudgetExceeded(err) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: snapshot: %v", ErrInvalid, err)
	}
	seen := make(map[string]int, len(records))
	for i, r := range records {
		key, err := Key(r, keyField)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		if first, dup := seen[key]; dup {
			return nil, fmt.Errorf("%w: records %d and %d have the same %s %q", ErrInvalid, first, i, keyField, key)
		}
		seen[key] = i
	}
	return records, nil
}

// errNotASnapshot is a body that is neither form of a snapshot.
var errNotASnapshot = errors.New(`a snapshot is a JSON array of records or an object with a "records" array`)

// snapshotRecords reads the records of either form of a snapshot; other fields of the object form are skipped.
func snapshotRecords(dec *json.Decoder, maxRecords int) ([]Record, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, errNotASnapshot
	}
	var records []Record
	switch tok {
	case json.Delim('['):
		if records, err = readRecords(dec, maxRecords); err != nil {
			return nil, err
		}
	case json.Delim('{'):
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return nil, err
			}
			if key != "records" {
				var skipped json.RawMessage
				if err := dec.Decode(&skipped); err != nil {
					return nil, err
				}
				continue
			}
			if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
				return nil, errors.New(`a snapshot object needs a "records" array`)
			}
			if records, err = readRecords(dec, maxRecords); err != nil {
				return nil, err
			}
		}
		if _, err := dec.Token(); err != nil { // '}'
			return nil, err
		}
		if records == nil {
			return nil, errors.New(`a snapshot object needs a "records" array`)
		}
	default:
		return nil, errNotASnapshot
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the snapshot")
	}
	return records, nil
}

// ParseDelta reads {"upsert": [...], "delete": [...]} and checks its records as ParseSnapshot does. A delta
// of more than maxRecords upserts (0: inventory.DefaultMaxRecords) is refused with an *inventory.BudgetError;
// its body is bounded before it is read (the endpoint's maxBodyBytes).
func ParseDelta(body []byte, keyField string, maxRecords int) (Delta, error) {
	var d Delta
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields() // a misspelt "deletes" must not be a delta that deletes nothing
	if err := dec.Decode(&d); err != nil {
		return Delta{}, fmt.Errorf("%w: delta: %v", ErrInvalid, err)
	}
	if d.Upsert == nil && d.Delete == nil {
		return Delta{}, fmt.Errorf("%w: a delta needs \"upsert\" or \"delete\"", ErrInvalid)
	}
	if maxRecords <= 0 {
		maxRecords = inventory.DefaultMaxRecords
	}
	if len(d.Upsert) > maxRecords {
		return Delta{}, inventory.TooManyRecords(maxRecords)
	}
	upserted := make(map[string]bool, len(d.Upsert))
	for i, r := range d.Upsert {
		key, err := Key(r, keyField)
		if err != nil {
			return Delta{}, fmt.Errorf("upsert %d: %w", i, err)
		}
		if upserted[key] {
			return Delta{}, fmt.Errorf("%w: %s %q is upserted twice", ErrInvalid, keyField, key)
		}
		upserted[key] = true
	}
	for _, key := range d.Delete {
		if upserted[key] {
			return Delta{}, fmt.Errorf("%w: %s %q is both upserted and deleted", ErrInvalid, keyField, key)
		}
	}
	return d, nil
}

// Key is the record's value of keyField: a non-empty string, or a number in its JSON spelling (NetBox's
// integer ids).
func Key(r Record, keyField string) (string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(r, &fields); err != nil || fields == nil {
		return "", fmt.Errorf("%w: a record must be a JSON object", ErrInvalid)
	}
	raw, ok := fields[keyField]
	if !ok {
		return "", fmt.Errorf("%w: the record has no key field %q", ErrInvalid, keyField)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if s == "" {
			return "", fmt.Errorf("%w: the record's key field %q is empty", ErrInvalid, keyField)
		}
		return s, nil
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&n); err == nil {
		if _, err := strconv.ParseFloat(n.String(), 64); err == nil {
			return n.String(), nil
		}
	}
	return "", fmt.Errorf("%w: the record's key field %q is neither a string nor a number", ErrInvalid, keyField)
}

// DeltaResult counts what a delta did to the stored snapshot.
type DeltaResult struct {
	Added, Replaced, Deleted int
	// Missing are deletes of keys the snapshot did not hold: nothing to do, counted so the sender can tell.
	Missing int
}

// Apply returns the snapshot with the delta applied: replaced records keep their place, added ones follow
// in the delta's order, deleted ones go. stored is not modified. Its records' keys were checked when they
// were stored.
func Apply(stored []Record, d Delta, keyField string) ([]Record, DeltaResult, error) {
	var res DeltaResult
	index := make(map[string]int, len(stored))
	for i, r := range stored {
		key, err := Key(r, keyField)
		if err != nil {
			return nil, res, fmt.Errorf("stored record %d: %w", i, err)
		}
		index[key] = i
	}
	out := append(make([]Record, 0, len(stored)+len(d.Upsert)), stored...)
	for _, r := range d.Upsert {
		key, err := Key(r, keyField)
		if err != nil {
			return nil, res, err
		}
		if i, ok := index[key]; ok {
			out[i] = r
			res.Replaced++
			continue
		}
		index[key] = len(out)
		out = append(out, r)
		res.Added++
	}
	gone := make(map[int]bool, len(d.Delete))
	for _, key := range d.Delete {
		i, ok := index[key]
		if !ok || gone[i] {
			res.Missing++
			continue
		}
		gone[i] = true
		res.Deleted++
	}
	if len(gone) == 0 {
		return out, res, nil
	}
	kept := out[:0]
	for i, r := range out {
		if !gone[i] {
			kept = append(kept, r)
		}
	}
	return kept, res, nil
}
