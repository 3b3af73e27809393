package render

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/quick"
)

func TestTLSFileNames(t *testing.T) {
	long := strings.Repeat("a", 250)
	tests := []struct {
		name, secret, key string
		want              string
	}{
		{name: "joins the secret and the file with a double underscore", secret: "device-ca", key: CAFile, want: "device-ca__ca.crt"},
		{name: "keeps the dots of a secret name", secret: "spine.ca", key: CertFile, want: "spine.ca__tls.crt"},
		{name: "shortens a name that would exceed a Secret key, keeping its start", secret: long, key: KeyFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TLSFileName(tt.secret, tt.key)
			if tt.want != "" && got != tt.want {
				t.Errorf("TLSFileName(%q, %q) = %q, want %q", tt.secret, tt.key, got, tt.want)
			}
			if tt.want == "" && (len(got) != 253 || !strings.HasPrefix(got, tt.secret[:200]) || !strings.HasSuffix(got, "__"+tt.key)) {
				t.Errorf("TLSFileName(%q, %q) = %q, want the 253 characters of a Secret key with the start of the name and the file", tt.secret, tt.key, got)
			}
			if !validSecretKey(got) {
				t.Errorf("TLSFileName(%q, %q) = %q is not a valid Secret key", tt.secret, tt.key, got)
			}
			if want := path.Join(TLSRoot, got); TLSFilePath(tt.secret, tt.key) != want {
				t.Errorf("TLSFilePath = %q, want %q", TLSFilePath(tt.secret, tt.key), want)
			}
		})
	}
}

func TestTLSFileNamesAreDistinctForDistinctSecretsAndFiles(t *testing.T) {
	long := strings.Repeat("b", 240)
	secrets := []string{"a", "a.b", "a-b", "ab", long + "1", long + "2", strings.Repeat("c", 253), strings.Repeat("c", 252)}
	seen := map[string]string{}
	for _, s := range secrets {
		for _, key := range tlsFileKeys {
			name := TLSFileName(s, key)
			if other, dup := seen[name]; dup {
				t.Errorf("%s/%s and %s both map to %q", s, key, other, name)
			}
			seen[name] = s + "/" + key
			if !validSecretKey(name) {
				t.Errorf("%q is not a valid Secret key", name)
			}
		}
	}
}

// validSecretKey is the API server's rule for the keys of a Secret's data.
func validSecretKey(k string) bool {
	return len(k) <= 253 && regexp.MustCompile(`^[-._a-zA-Z0-9]+$`).MatchString(k) && !strings.HasPrefix(k, "..") && k != "."
}

// kib is n KiB of filler, distinct per seed.
func kib(n int, seed byte) []byte { return bytes.Repeat([]byte{seed}, n<<10) }

func TestBundleTLS(t *testing.T) {
	ca := map[string][]byte{CAFile: []byte("ca")}
	client := map[string][]byte{CAFile: []byte("ca"), CertFile: []byte("cert"), KeyFile: []byte("key")}
	tests := []struct {
		name        string
		in          TLSBundleInput
		wantFiles   []string // names of the bundle's files
		wantOmitted []string
	}{
		{
			name: "holds the CA and client files of every needed Secret, named after the Secret",
			in: TLSBundleInput{Needed: []string{"spine", "leaf"},
				Secrets: map[string]map[string][]byte{"leaf": client, "spine": ca}},
			wantFiles: []string{"leaf__ca.crt", "leaf__tls.crt", "leaf__tls.key", "spine__ca.crt"},
		},
		{
			name: "holds only the files targets use",
			in: TLSBundleInput{Needed: []string{"leaf", "half"}, Secrets: map[string]map[string][]byte{
				"leaf": {CAFile: []byte("ca"), "README": []byte("notes")},
				"half": {CAFile: []byte("ca"), CertFile: []byte("cert")}, // rendering skips its targets
			}},
			wantFiles: []string{"leaf__ca.crt"},
		},
		{
			name: "leaves out Secrets that do not exist, which rendering reports",
			in: TLSBundleInput{Needed: []string{"leaf", "gone"}, Secrets: map[string]map[string][]byte{"leaf": ca},
				Current: map[string][]byte{"gone__ca.crt": []byte("ca")}},
			wantFiles: []string{"leaf__ca.crt"},
		},
		{
			name: "drops the files of Secrets no target needs any more",
			in: TLSBundleInput{Needed: []string{"leaf"}, Secrets: map[string]map[string][]byte{"leaf": ca, "old": ca},
				Current: map[string][]byte{"leaf__ca.crt": []byte("ca"), "old__ca.crt": []byte("ca")}},
			wantFiles: []string{"leaf__ca.crt"},
		},
		{
			name: "omits the Secrets that do not fit, taking new ones in name order",
			in: TLSBundleInput{Needed: []string{"b", "a"}, Secrets: map[string]map[string][]byte{
				"a": {CAFile: kib(600, 'a')}, "b": {CAFile: kib(600, 'b')}}},
			wantFiles:   []string{"a__ca.crt"},
			wantOmitted: []string{"b"},
		},
		{
			name: "keeps the Secrets it holds before it takes new ones",
			in: TLSBundleInput{Needed: []string{"a", "b"}, Secrets: map[string]map[string][]byte{
				"a": {CAFile: kib(600, 'a')}, "b": {CAFile: kib(600, 'b')}},
				Current: map[string][]byte{"b__ca.crt": kib(600, 'b')}},
			wantFiles:   []string{"b__ca.crt"},
			wantOmitted: []string{"a"},
		},
		{
			name: "fills the room left by a Secret that does not fit with those that do",
			in: TLSBundleInput{Needed: []string{"a", "b", "c"}, Secrets: map[string]map[string][]byte{
				"a": {CAFile: kib(600, 'a')}, "b": {CAFile: kib(600, 'b')}, "c": ca}},
			wantFiles:   []string{"a__ca.crt", "c__ca.crt"},
			wantOmitted: []string{"b"},
		},
		{
			name: "omits a Secret that alone exceeds the limit",
			in: TLSBundleInput{Needed: []string{"huge", "leaf"}, Secrets: map[string]map[string][]byte{
				"huge": {CAFile: kib(700, 'h'), CertFile: kib(300, 'c'), KeyFile: kib(100, 'k')}, "leaf": ca}},
			wantFiles:   []string{"leaf__ca.crt"},
			wantOmitted: []string{"huge"},
		},
		{
			name:      "is empty when no target needs TLS files",
			in:        TLSBundleInput{Current: map[string][]byte{"old__ca.crt": []byte("ca")}},
			wantFiles: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := BundleTLS(tt.in)
			if names := slices.Sorted(maps.Keys(got.Files)); !slices.Equal(names, tt.wantFiles) {
				t.Errorf("files = %v, want %v", names, tt.wantFiles)
			}
			for name, data := range got.Files {
				secret, key, _ := strings.Cut(name, "__")
				if !bytes.Equal(data, tt.in.Secrets[secret][key]) {
					t.Errorf("file %s is not %s of Secret %s", name, key, secret)
				}
			}
			if omitted := slices.Sorted(maps.Keys(got.Omitted)); !slices.Equal(omitted, tt.wantOmitted) {
				t.Errorf("omitted = %v, want %v", omitted, tt.wantOmitted)
			}
			for secret, err := range got.Omitted {
				if !errors.Is(err, ErrTLSBundleFull) {
					t.Errorf("omitted %s: %v, want ErrTLSBundleFull", secret, err)
				}
			}
		})
	}
}

func TestBundleTLSTakesARotatedSecretsNewContent(t *testing.T) {
	got := BundleTLS(TLSBundleInput{Needed: []string{"leaf"},
		Secrets: map[string]map[string][]byte{"leaf": {CAFile: []byte("new ca")}},
		Current: map[string][]byte{"leaf__ca.crt": []byte("old ca")}})
	if want := map[string][]byte{"leaf__ca.crt": []byte("new ca")}; !maps.EqualFunc(got.Files, want, bytes.Equal) {
		t.Fatalf("files = %q, want %q", got.Files, want)
	}
}

func TestBundleTLSOmissionSaysWhyWithoutContent(t *testing.T) {
	got := BundleTLS(TLSBundleInput{Needed: []string{"a", "b"}, Secrets: map[string]map[string][]byte{
		"a": {CAFile: kib(600, 'a')}, "b": {CAFile: kib(600, 'b')}}})
	msg := got.Omitted["b"].Error()
	for _, want := range []string{"1 MiB", "600 KiB", "424 KiB"} {
		if !strings.Contains(msg, want) {
			t.Errorf("omission %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "bbbb") {
		t.Errorf("omission %q quotes the Secret's content", msg)
	}
}

// randomBundleInput is a TLS bundle input built from random values (testing/quick): eight Secrets of up to
// 450 KiB each, some with a client certificate, some needed, some held.
func randomBundleInput(sizes [8]uint16, needed, held uint8) TLSBundleInput {
	in := TLSBundleInput{Secrets: map[string]map[string][]byte{}, Current: map[string][]byte{}}
	for i, size := range sizes {
		name := fmt.Sprintf("s%d", i)
		data := map[string][]byte{CAFile: bytes.Repeat([]byte{byte('a' + i)}, int(size)*7)} // up to ~450 KiB
		if size%3 == 0 {
			data[CertFile], data[KeyFile] = []byte("cert"), []byte("key")
		}
		in.Secrets[name] = data
		if needed&(1<<i) != 0 {
			in.Needed = append(in.Needed, name)
		}
		if held&(1<<i) != 0 {
			in.Current[TLSFileName(name, CAFile)] = data[CAFile]
		}
	}
	return in
}

func bundleSize(files map[string][]byte) int {
	n := 0
	for name, data := range files {
		n += len(name) + len(data)
	}
	return n
}

func TestBundleTLSProperties(t *testing.T) {
	properties := map[string]func(sizes [8]uint16, needed, held uint8) bool{
		"never exceeds the size of a Secret": func(sizes [8]uint16, needed, held uint8) bool {
			return bundleSize(BundleTLS(randomBundleInput(sizes, needed, held)).Files) <= MaxTLSBundleSize
		},
		"holds or omits every needed Secret, never both": func(sizes [8]uint16, needed, held uint8) bool {
			in := randomBundleInput(sizes, needed, held)
			got := BundleTLS(in)
			for _, s := range in.Needed {
				_, holds := got.Files[TLSFileName(s, CAFile)]
				_, omitted := got.Omitted[s]
				if holds == omitted {
					return false
				}
			}
			return true
		},
		"is a fixed point: written back, it stays as it is": func(sizes [8]uint16, needed, held uint8) bool {
			in := randomBundleInput(sizes, needed, held)
			first := BundleTLS(in)
			in.Current = first.Files
			second := BundleTLS(in)
			return maps.EqualFunc(first.Files, second.Files, bytes.Equal) &&
				slices.Equal(slices.Sorted(maps.Keys(first.Omitted)), slices.Sorted(maps.Keys(second.Omitted)))
		},
		"does not depend on the order of the needed Secrets": func(sizes [8]uint16, needed, held uint8) bool {
			in := randomBundleInput(sizes, needed, held)
			first := BundleTLS(in)
			slices.Reverse(in.Needed)
			second := BundleTLS(in)
			return maps.EqualFunc(first.Files, second.Files, bytes.Equal)
		},
	}
	for name, property := range properties {
		t.Run(name, func(t *testing.T) {
			if err := quick.Check(property, &quick.Config{MaxCount: 50}); err != nil {
				t.Error(err)
			}
		})
	}
}
