package gnmic

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
)

// ErrTargetNotFound is returned (wrapped) when the collector does not know the
// target a call names. Test for it with errors.Is.
var ErrTargetNotFound = errors.New("target not found")

// ConfigRejectedError is a 400 answer to an apply: the collector refused the
// configuration and kept its previous one. Errors are the collector's own
// messages ("validate error: ...", "decode error: ...").
type ConfigRejectedError struct {
	Errors []string
}

func (e *ConfigRejectedError) Error() string {
	return "collector rejected config: " + strings.Join(e.Errors, "; ")
}

// UnsupportedError is the answer of a collector that lacks a feature the call needs: its API server has no
// route for it. Test for it with errors.As; Feature says which, and FeatureSince the release that has it.
type UnsupportedError struct {
	Feature Feature
	// Answer is what the collector answered, such as "POST /api/v1/config/apply answered 404".
	Answer string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("collector has no %s (%s): gNMIc %s or newer has it", e.Feature, e.Answer, FeatureSince(e.Feature))
}

// StatusError is any other unexpected HTTP answer. Errors holds the
// collector's {"errors": [...]} list when the body had one; Excerpt holds the
// start of the body otherwise. Request bodies never appear in it.
type StatusError struct {
	StatusCode int
	Errors     []string
	Excerpt    string
}

func (e *StatusError) Error() string {
	switch {
	case len(e.Errors) > 0:
		return fmt.Sprintf("unexpected status %d: %s", e.StatusCode, strings.Join(e.Errors, "; "))
	case e.Excerpt != "":
		return fmt.Sprintf("unexpected status %d: %s", e.StatusCode, e.Excerpt)
	}
	return fmt.Sprintf("unexpected status %d", e.StatusCode)
}

// says reports whether the collector's answer carries message, either in its
// errors list or as a plain-text body.
func (e *StatusError) says(message string) bool {
	return slices.Contains(e.Errors, message) || e.Excerpt == message
}

// maxErrorBody bounds how much of an error answer is read; maxExcerpt how much
// of it is quoted in an error.
const (
	maxErrorBody = 64 << 10
	maxExcerpt   = 200
)

// apiErrors is the collector's error body. It comes with Content-Type
// text/plain, so the content type is never checked.
type apiErrors struct {
	Errors []string `json:"errors"`
}

// readStatusError builds a StatusError from an unexpected answer.
func readStatusError(statusCode int, body io.Reader) *StatusError {
	raw, _ := io.ReadAll(io.LimitReader(body, maxErrorBody))
	var parsed apiErrors
	if err := json.Unmarshal(raw, &parsed); err == nil && len(parsed.Errors) > 0 {
		return &StatusError{StatusCode: statusCode, Errors: parsed.Errors}
	}
	return &StatusError{StatusCode: statusCode, Excerpt: excerpt(raw)}
}

// excerpt makes a short single-line quote of a response body.
func excerpt(raw []byte) string {
	s := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, string(raw))
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > maxExcerpt {
		s = string(r[:maxExcerpt]) + "..."
	}
	return s
}
