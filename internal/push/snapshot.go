package push

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/gnmic-operator/gnmic-operator/internal/inventory"
)

// Snapshot is a set of records in the form it is stored in: gzip-compressed JSON, and the SHA-256 of the
// uncompressed JSON, which changes exactly when a record does (records are kept as posted, byte for byte).
type Snapshot struct {
	Compressed []byte
	Digest     string
	Records    int
}

// Encode compresses the records as one JSON array.
func Encode(records []Record) (Snapshot, error) {
	if records == nil {
		records = []Record{}
	}
	plain, err := json.Marshal(records)
	if err != nil {
		return Snapshot{}, fmt.Errorf("encode snapshot: %w", err)
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return Snapshot{}, fmt.Errorf("compress snapshot: %w", err)
	}
	if _, err := zw.Write(plain); err != nil {
		return Snapshot{}, fmt.Errorf("compress snapshot: %w", err)
	}
	if err := zw.Close(); err != nil {
		return Snapshot{}, fmt.Errorf("compress snapshot: %w", err)
	}
	sum := sha256.Sum256(plain)
	return Snapshot{Compressed: buf.Bytes(), Digest: hex.EncodeToString(sum[:]), Records: len(records)}, nil
}

// Decode reads the records of a compressed snapshot as it decompresses it, refusing one that decompresses
// beyond budget.MaxBytes or holds more than budget.MaxRecords records (an *inventory.BudgetError) at the
// first byte or record too many.
func Decode(compressed []byte, budget inventory.Budget) ([]Record, error) {
	zr, err := gzip.NewReader(bytes.NewReader(compressed))
	if err != nil {
		return nil, fmt.Errorf("decompress snapshot: %w", err)
	}
	defer zr.Close()
	dec := json.NewDecoder(inventory.LimitSyncBytes(zr, budget.MaxBytes))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, fmt.Errorf("decode snapshot: not a JSON array of records: %w", errOr(err, ErrInvalid))
	}
	records, err := readRecords(dec, budget.MaxRecords)
	if err != nil {
		return nil, fmt.Errorf("decode snapshot: %w", err)
	}
	return records, nil
}

// readRecords reads the rest of a JSON array whose '[' dec has read, one record at a time, refusing more than
// maxRecords of them (0: inventory.DefaultMaxRecords).
func readRecords(dec *json.Decoder, maxRecords int) ([]Record, error) {
	if maxRecords <= 0 {
		maxRecords = inventory.DefaultMaxRecords
	}
	records := []Record{}
	for dec.More() {
		if len(records) == maxRecords {
			return nil, inventory.TooManyRecords(maxRecords)
		}
		var r Record
		if err := dec.Decode(&r); err != nil {
			return nil, err
		}
		records = append(records, r)
	}
	if _, err := dec.Token(); err != nil { // ']'
		return nil, err
	}
	return records, nil
}

func errOr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// MaxCompressed is the most a compressed snapshot may weigh: a ConfigMap holds at most 1 MiB of data and
// binaryData together (its keys included), and the snapshot is its one key.
const MaxCompressed = 1<<20 - 1<<10
