package gnmic

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

var secrets = []string{"s3cret", "KEYDATA", "kpass", "tok3n"}

func secretConfig() Config {
	c := sampleConfig()
	r := c.Targets["ns/r1"]
	r.Token = "tok3n"
	c.Targets["ns/r1"] = r
	return c
}

func assertNoSecret(t *testing.T, what, s string) {
	t.Helper()
	for _, secret := range secrets {
		if strings.Contains(s, secret) {
			t.Errorf("%s leaks %q: %s", what, secret, s)
		}
	}
}

func TestRedactedMasksEverySecret(t *testing.T) {
	red := secretConfig().Redacted()
	body, err := json.Marshal(red)
	if err != nil {
		t.Fatal(err)
	}
	assertNoSecret(t, "Redacted", string(body))
	if red.Targets["ns/r1"].Password != RedactedValue || red.Targets["ns/r2"].TLSKey != RedactedValue {
		t.Errorf("secrets not replaced by %q: %+v", RedactedValue, red.Targets)
	}
	if red.Targets["ns/r2"].Password != "" {
		t.Error("an empty password must stay empty so that logs show it is unset")
	}
	if red.Targets["ns/r1"].Username != "admin" || red.Outputs["prom"]["listen"] != ":9804" {
		t.Error("Redacted masked more than secrets")
	}
}

func TestRedactedLeavesTheOriginalIntact(t *testing.T) {
	c := secretConfig()
	_ = c.Redacted()
	if !reflect.DeepEqual(c, secretConfig()) {
		t.Fatal("Redacted modified its receiver")
	}
}

func TestLoggingAConfigNeverShowsSecrets(t *testing.T) {
	c := secretConfig()
	assertNoSecret(t, "%v", fmt.Sprintf("%v", c))
	assertNoSecret(t, "%+v of a target", fmt.Sprintf("%+v", c.Targets["ns/r1"]))
	for _, v := range []any{c.MarshalLog(), c.Targets["ns/r1"].MarshalLog()} {
		body, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		assertNoSecret(t, "MarshalLog", string(body))
	}
}

func TestSecretKeysAreRecognisedButFilePathsAreNot(t *testing.T) {
	tests := map[string]bool{
		"password": true, "sasl-password": true, "token": true, "client-secret": true, "tls-key": true,
		"key-file": false, "password-file": false, "username": false, "address": false,
	}
	for key, want := range tests {
		if got := secretKey(key); got != want {
			t.Errorf("secretKey(%q) = %v, want %v", key, got, want)
		}
	}
}
