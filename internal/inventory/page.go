package inventory

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// pageFields are the dotted paths a page is read for: its records (nil: the page is the list), its next link
// and its count (nil: not read).
type pageFields struct {
	records, next, count []string
}

func newPageFields(records, next, count string) pageFields {
	split := func(p string) []string {
		if p == "" {
			return nil
		}
		return strings.Split(p, ".")
	}
	return pageFields{records: split(records), next: split(next), count: split(count)}
}

// pageValues are the values a page held at its next and count paths (nil when it had none).
type pageValues struct {
	next, count any
	countFound  bool
}

// pageDecoder reads one page as it arrives: each record at the records path is decoded on its own and handed
// to onRecord, the next and count values are kept, and everything else is skipped token by token without being
// built. What a page costs in memory is so one record at a time, whatever the page holds besides.
type pageDecoder struct {
	dec          *json.Decoder
	fields       pageFields
	onRecord     func(Record) error
	values       pageValues
	recordsFound bool
}

// decodePage reads one JSON document from r, handing its records to onRecord in order.
func decodePage(r io.Reader, fields pageFields, onRecord func(Record) error) (pageValues, error) {
	d := &pageDecoder{dec: json.NewDecoder(r), fields: fields, onRecord: onRecord}
	if err := d.value(nil); err != nil {
		if errors.Is(err, io.EOF) { // the document stopped part way
			err = io.ErrUnexpectedEOF
		}
		return pageValues{}, err
	}
	if _, err := d.dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return pageValues{}, err
		}
		return pageValues{}, errors.New("the page holds more than one JSON document")
	}
	if !d.recordsFound {
		return pageValues{}, fmt.Errorf("no %s in the page", strings.Join(fields.records, "."))
	}
	return d.values, nil
}

// value reads the value at path.
func (d *pageDecoder) value(path []string) error {
	switch {
	case slices.Equal(path, d.fields.records):
		return d.records(path)
	case d.fields.next != nil && slices.Equal(path, d.fields.next), d.fields.count != nil && slices.Equal(path, d.fields.count):
		var v any
		if err := d.dec.Decode(&v); err != nil {
			return err
		}
		if slices.Equal(path, d.fields.next) {
			d.values.next = v
		}
		if slices.Equal(path, d.fields.count) {
			d.values.count, d.values.countFound = v, true
		}
		return nil
	case !d.leadsToAField(path):
		return d.skip()
	}
	tok, err := d.dec.Token()
	if err != nil {
		return err
	}
	if tok != json.Delim('{') {
		// Not an object: what is looked for below it is not there.
		return d.skipRest(tok)
	}
	for d.dec.More() {
		key, err := d.dec.Token()
		if err != nil {
			return err
		}
		if err := d.value(append(slices.Clip(path), key.(string))); err != nil {
			return err
		}
	}
	_, err = d.dec.Token() // '}'
	return err
}

// leadsToAField is true when a field read lies below path.
func (d *pageDecoder) leadsToAField(path []string) bool {
	for _, f := range [][]string{d.fields.records, d.fields.next, d.fields.count} {
		if f != nil && len(f) > len(path) && slices.Equal(f[:len(path)], path) {
			return true
		}
	}
	return false
}

// records reads the list of records at path, one record at a time.
func (d *pageDecoder) records(path []string) error {
	where := "the page"
	if len(path) > 0 {
		where = strings.Join(path, ".")
	}
	if d.recordsFound {
		return fmt.Errorf("the page has %s twice", where)
	}
	d.recordsFound = true
	tok, err := d.dec.Token()
	if err != nil {
		return err
	}
	if tok != json.Delim('[') {
		return fmt.Errorf("%s is %s, not a list of records", where, tokenKind(tok))
	}
	for i := 0; d.dec.More(); i++ {
		var item any
		if err := d.dec.Decode(&item); err != nil {
			return err
		}
		rec, ok := item.(map[string]any)
		if !ok {
			return fmt.Errorf("record %d is %s, not an object", i, jsonKind(item))
		}
		if err := d.onRecord(rec); err != nil {
			return err
		}
	}
	_, err = d.dec.Token() // ']'
	return err
}

// skip reads past the next value without building it.
func (d *pageDecoder) skip() error {
	tok, err := d.dec.Token()
	if err != nil {
		return err
	}
	return d.skipRest(tok)
}

// skipRest reads past the rest of the value that tok starts.
func (d *pageDecoder) skipRest(tok json.Token) error {
	depth := 0
	for {
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
		var err error
		if tok, err = d.dec.Token(); err != nil {
			return err
		}
	}
}

// tokenKind names the JSON type of the value a token starts, as jsonKind does.
func tokenKind(tok json.Token) string {
	switch tok {
	case json.Delim('{'):
		return "an object"
	case json.Delim('['):
		return "a list"
	}
	return jsonKind(tok)
}
