package gnmic

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// Apply pushes cfg (in its Normalize form) to POST /api/v1/config/apply. The
// collector replaces its whole configuration: anything absent from cfg is
// removed. Success means accepted, not connected: targets start afterwards,
// so read Targets to learn whether they collect.
//
// A 400 answer is a *ConfigRejectedError; any other non-200 answer is a
// *StatusError. Errors never quote the request body, which holds
// credentials.
func (c *Client) Apply(ctx context.Context, cfg Config) error {
	e, err := Encode(cfg)
	if err != nil {
		return fmt.Errorf("apply config to %s: %w", c.base, err)
	}
	return c.ApplyEncoded(ctx, e)
}

// ApplyEncoded is Apply of e.Config, sending the body e holds.
func (c *Client) ApplyEncoded(ctx context.Context, e Encoded) error {
	if err := c.apply(ctx, e.body); err != nil {
		return fmt.Errorf("apply config to %s: %w", c.base, err)
	}
	return nil
}

func (c *Client) apply(ctx context.Context, body []byte) error {
	var err error
	header := http.Header{"Content-Type": {"application/json"}}
	if c.gzipApply {
		if body, err = gzipBytes(body); err != nil {
			return err
		}
		header.Set("Content-Encoding", "gzip")
	}
	resp, err := c.do(ctx, http.MethodPost, "/api/v1/config/apply", header, bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer drain(resp)
	switch resp.StatusCode {
	case http.StatusOK:
		return nil
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		// The API server has no such route: the collector predates config apply (or runs another command).
		return &UnsupportedError{Feature: FeatureConfigApply,
			Answer: fmt.Sprintf("POST /api/v1/config/apply answered %d", resp.StatusCode)}
	case http.StatusBadRequest:
		statusErr := readStatusError(resp.StatusCode, resp.Body)
		if len(statusErr.Errors) > 0 {
			return &ConfigRejectedError{Errors: statusErr.Errors}
		}
		return statusErr
	default:
		return readStatusError(resp.StatusCode, resp.Body)
	}
}

func gzipBytes(body []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(body)
	if closeErr := zw.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return nil, fmt.Errorf("compress config: %w", err)
	}
	return buf.Bytes(), nil
}

// maxStateBody bounds a targets answer (about 2 KiB per target).
const maxStateBody = 64 << 20

// decodeJSON decodes a JSON answer whatever its Content-Type: the collector
// labels JSON text/plain.
func decodeJSON(r io.Reader, v any) error {
	dec := json.NewDecoder(io.LimitReader(r, maxStateBody))
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("decode answer: empty body")
		}
		return fmt.Errorf("decode answer: %w", err)
	}
	return nil
}
