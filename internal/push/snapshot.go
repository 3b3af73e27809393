package push

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
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

// Decode reads the records of a compressed snapshot, refusing one that decompresses beyond maxBytes.
func Decode(compressed []byte, maxBytes int64) ([]Record, error) {
	zr, err := gzip.NewReader(bytes.NewReader(compressed))
	if err != nil {
		return nil, fmt.Errorf("decompress snapshot: %w", err)
	}
	defer zr.Close()
	plain, err := io.ReadAll(io.LimitReader(zr, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("decompress snapshot: %w", err)
	}
	if int64(len(plain)) > maxBytes {
		return nil, fmt.Errorf("decompress snapshot: more than %d bytes", maxBytes)
	}
	var records []Record
	if err := json.Unmarshal(plain, &records); err != nil {
		return nil, fmt.Errorf("decode snapshot: %w", err)
	}
	if records == nil {
		records = []Record{}
	}
	return records, nil
}

// MaxCompressed is the most a compressed snapshot may weigh: a ConfigMap holds at most 1 MiB of data and
// binaryData together (its keys included), and the snapshot is its one key.
const MaxCompressed = 1<<20 - 1<<10
