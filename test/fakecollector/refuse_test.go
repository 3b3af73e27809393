package fakecollector

import (
	"net/http"
	"reflect"
	"testing"
)

func TestAnOutputWithARefusedSettingRefusesTheWholeApplyNamingTheOutput(t *testing.T) {
	c := StartForTest(t)
	c.RefuseOutputSetting("filename", "/out.csv", `unknown format "csv"`)
	mustApply(t, c, `{"outputs":{"file":{"type":"file","filename":"/out.json"}}}`)

	a := apply(t, c, `{"outputs":{"file":{"type":"file","filename":"/out.csv"}}}`)
	if a.status != http.StatusBadRequest {
		t.Fatalf("status = %d, want 400 (body %q)", a.status, a.body)
	}
	if got, want := errorsOf(t, a), []string{`validate error: output "file": unknown format "csv"`}; !reflect.DeepEqual(got, want) {
		t.Fatalf("errors = %q, want %q", got, want)
	}
	if c.ApplyCount() != 1 {
		t.Fatalf("a refused apply must change nothing, got %d applies", c.ApplyCount())
	}

	// The same value under another key is no refusal.
	mustApply(t, c, `{"outputs":{"file":{"type":"file","filename":"/out.json","format":"/out.csv"}}}`)

	c.ClearOutputRefusals()
	mustApply(t, c, `{"outputs":{"file":{"type":"file","filename":"/out.csv"}}}`)
}
