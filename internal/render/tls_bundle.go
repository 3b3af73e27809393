package render

import (
	"fmt"
	"slices"
)

// MaxTLSBundleSize is the most a Cluster's target TLS Secret holds, file
// names included: the API server refuses a Secret with more than 1 MiB of
// data.
const MaxTLSBundleSize = 1 << 20

// TLSBundleInput is what BundleTLS decides from.
type TLSBundleInput struct {
	// Needed are the TLS Secrets of the profiles of the selected targets
	// (selection.TLSSecretsOf), in any order.
	Needed []string
	// Secrets are the data of the Secrets by name, as rendering reads them; a
	// needed Secret missing here does not exist.
	Secrets map[string]map[string][]byte
	// Current is what the Cluster's target TLS Secret holds now.
	Current map[string][]byte
}

// TLSBundle is what the Cluster's target TLS Secret should hold.
type TLSBundle struct {
	// Files are its data: each TLS file targets use of each Secret it holds,
	// under TLSFileName.
	Files map[string][]byte
	// Omitted are the needed Secrets left out for lack of room, each with why
	// (ErrTLSBundleFull). The targets that need them are skipped.
	Omitted map[string]error
}

// BundleTLS decides what the Cluster's target TLS Secret holds: the files
// targets use (tlsFiles) of every needed Secret that exists and is valid, and
// nothing else, so that the last target of a Secret gone takes its files
// with it. Secrets that do not exist or lack a key are left out without
// being omitted: rendering skips their targets and says why.
//
// The bundle never exceeds MaxTLSBundleSize. When not every Secret fits, the
// Secrets it holds already are kept first (a new Secret never displaces the
// files of running targets), then the others are added in name order while
// they fit; the rest is omitted. Written back as Current, a bundle is its own
// result: a steady selection causes no write.
func BundleTLS(in TLSBundleInput) TLSBundle {
	out := TLSBundle{Files: map[string][]byte{}}
	needed := slices.Clone(in.Needed)
	slices.Sort(needed)
	needed = slices.Compact(needed)
	held := func(secret string) bool {
		for _, key := range tlsFileKeys {
			if _, ok := in.Current[TLSFileName(secret, key)]; ok {
				return true
			}
		}
		return false
	}
	// Held Secrets first, each group in name order.
	slices.SortStableFunc(needed, func(a, b string) int {
		switch ha, hb := held(a), held(b); {
		case ha && !hb:
			return -1
		case hb && !ha:
			return 1
		}
		return 0
	})
	used := 0
	for _, secret := range needed {
		data, ok := in.Secrets[secret]
		if !ok {
			continue
		}
		keys, err := tlsFiles(secret, data)
		if err != nil {
			continue
		}
		size := 0
		for _, key := range keys {
			size += len(TLSFileName(secret, key)) + len(data[key])
		}
		if used+size > MaxTLSBundleSize {
			if out.Omitted == nil {
				out.Omitted = map[string]error{}
			}
			out.Omitted[secret] = fmt.Errorf("%w: its files take %s, %s are left", ErrTLSBundleFull,
				kibibytes(size), kibibytes(MaxTLSBundleSize-used))
			continue
		}
		used += size
		for _, key := range keys {
			out.Files[TLSFileName(secret, key)] = data[key]
		}
	}
	return out
}

// kibibytes spells n bytes in KiB, rounded.
func kibibytes(n int) string {
	return fmt.Sprintf("%d KiB", (n+512)/1024)
}
