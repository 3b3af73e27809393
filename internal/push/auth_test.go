package push

import (
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestAuthenticate(t *testing.T) {
	secret := []byte("s3cret-token")
	body := []byte(`[{"name":"r1","address":"10.0.0.1:57400"}]`)
	signature := SignatureHeaderValue(secret, body)
	header := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	cases := []struct {
		name   string
		cred   Credential
		header http.Header
		body   []byte
		ok     bool
		reason string
	}{
		{"bearer: the right token", Credential{Bearer, secret}, header("Authorization", "Bearer s3cret-token"), body, true, ""},
		{"bearer: the scheme in lower case", Credential{Bearer, secret}, header("Authorization", "bearer s3cret-token"), body, true, ""},
		{"bearer: no header", Credential{Bearer, secret}, header(), body, false, "no Authorization header"},
		{"bearer: a wrong token", Credential{Bearer, secret}, header("Authorization", "Bearer s3cret-tokem"), body, false, "wrong bearer token"},
		{"bearer: a prefix of the token", Credential{Bearer, secret}, header("Authorization", "Bearer s3cret"), body, false, "wrong bearer token"},
		{"bearer: the token longer", Credential{Bearer, secret}, header("Authorization", "Bearer s3cret-token2"), body, false, "wrong bearer token"},
		{"bearer: basic auth instead", Credential{Bearer, secret}, header("Authorization", "Basic czNjcmV0LXRva2Vu"), body, false, "not a bearer token"},
		{"bearer: an empty secret accepts nothing", Credential{Bearer, nil}, header("Authorization", "Bearer "), body, false, "secret is empty"},
		{"bearer: a signature is not a token", Credential{Bearer, secret}, header(SignatureHeader, signature), body, false, "no Authorization header"},
		{"hmac: the right signature", Credential{HMACSHA256, secret}, header(SignatureHeader, signature), body, true, ""},
		{"hmac: upper-case hex", Credential{HMACSHA256, secret}, header(SignatureHeader, "sha256="+strings.ToUpper(signature[7:])), body, true, ""},
		{"hmac: a replayed body with its signature is accepted", Credential{HMACSHA256, secret}, header(SignatureHeader, signature), append([]byte(nil), body...), true, ""},
		{"hmac: no header", Credential{HMACSHA256, secret}, header(), body, false, "no X-Signature-256 header"},
		{"hmac: signed with a wrong key", Credential{HMACSHA256, secret}, header(SignatureHeader, SignatureHeaderValue([]byte("other"), body)), body, false, "does not match"},
		{"hmac: the body changed after signing", Credential{HMACSHA256, secret}, header(SignatureHeader, signature), []byte(`[]`), false, "does not match"},
		{"hmac: a truncated signature", Credential{HMACSHA256, secret}, header(SignatureHeader, signature[:len(signature)-2]), body, false, "not 64 hex digits"},
		{"hmac: a signature with an odd digit count", Credential{HMACSHA256, secret}, header(SignatureHeader, signature[:len(signature)-1]), body, false, "not 64 hex digits"},
		{"hmac: no algorithm prefix", Credential{HMACSHA256, secret}, header(SignatureHeader, signature[7:]), body, false, "must be sha256=<hex>"},
		{"hmac: sha1 as GitHub's old header", Credential{HMACSHA256, secret}, header(SignatureHeader, "sha1="+hex.EncodeToString(make([]byte, 20))), body, false, "must be sha256=<hex>"},
		{"hmac: not hex", Credential{HMACSHA256, secret}, header(SignatureHeader, "sha256="+strings.Repeat("zz", 32)), body, false, "not 64 hex digits"},
		{"hmac: the bearer token is not a signature", Credential{HMACSHA256, secret}, header("Authorization", "Bearer s3cret-token"), body, false, "no X-Signature-256 header"},
		{"hmac: an empty secret accepts nothing", Credential{HMACSHA256, nil}, header(SignatureHeader, SignatureHeaderValue(nil, body)), body, false, "secret is empty"},
		{"an unknown scheme accepts nothing", Credential{"Basic", secret}, header("Authorization", "Bearer s3cret-token"), body, false, "unknown authentication scheme"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cred.Authenticate(tc.header, tc.body)
			if tc.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrUnauthenticated) {
				t.Fatalf("error %v, want ErrUnauthenticated", err)
			}
			if !strings.Contains(err.Error(), tc.reason) {
				t.Fatalf("error %q does not say %q", err, tc.reason)
			}
			if strings.Contains(err.Error(), string(secret)) {
				t.Fatalf("error %q reveals the secret", err)
			}
		})
	}
}

// FuzzAuthenticateSignature: no header value other than the body's own signature is accepted.
func FuzzAuthenticateSignature(f *testing.F) {
	secret := []byte("key")
	f.Add([]byte("body"), SignatureHeaderValue(secret, []byte("body")))
	f.Add([]byte("body"), "sha256=")
	f.Add([]byte(""), SignatureHeaderValue(secret, nil))
	f.Fuzz(func(t *testing.T, body []byte, value string) {
		h := http.Header{}
		h.Set(SignatureHeader, value)
		err := Credential{HMACSHA256, secret}.Authenticate(h, body)
		want := SignatureHeaderValue(secret, body)
		valid := strings.HasPrefix(value, "sha256=") && strings.EqualFold(value, want)
		if (err == nil) != valid {
			t.Fatalf("value %q for body %q: err %v, valid signature %v", value, body, err, valid)
		}
	})
}
