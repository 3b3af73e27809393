package targetmapping

import (
	"fmt"
	"slices"
	"strings"
)

// allowedProfiles are the TargetProfiles a mapping's records may have: defaults.profile, and those
// allowedProfiles lists. A profile names the credentials sent to the record's address, and the netbox and
// consul presets read it from the inventory (gnmic_profile): without this list, whoever edits the inventory
// would choose which credentials go to which address. An empty list allows defaults.profile alone; with
// neither, no profile is allowed and every record is invalid. There is no wildcard: "*" is a name like any
// other, which no TargetProfile can have (and the CRD refuses it in allowedProfiles).
type allowedProfiles struct {
	names map[string]bool
	// text is the allowed names as a reason shows them, computed once per mapping.
	text string
}

// profilesInReason is how many allowed names a reason lists; the others are counted.
const profilesInReason = 5

func newAllowedProfiles(listed []string, defaultProfile string) allowedProfiles {
	a := allowedProfiles{names: map[string]bool{}}
	for _, p := range listed {
		a.names[p] = true
	}
	if defaultProfile != "" {
		a.names[defaultProfile] = true
	}
	sorted := make([]string, 0, len(a.names))
	for p := range a.names {
		sorted = append(sorted, p)
	}
	slices.Sort(sorted)
	switch {
	case len(sorted) == 0:
		a.text = "none: mapping.allowedProfiles is empty and mapping.defaults.profile is not set"
	case len(sorted) > profilesInReason:
		a.text = fmt.Sprintf("%s and %d more", strings.Join(sorted[:profilesInReason], ", "), len(sorted)-profilesInReason)
	default:
		a.text = strings.Join(sorted, ", ")
	}
	return a
}

// check is nil when a record may have the profile, else why not: the profile and the field that would allow
// it.
func (a allowedProfiles) check(profile string) error {
	if a.names[profile] {
		return nil
	}
	return fmt.Errorf("profile %s is not in mapping.allowedProfiles (allowed: %s)", quoteAtMost(profile, 64), a.text)
}

// quoteAtMost quotes the first n bytes of s, and says how long s was when it cuts it: a value from the
// inventory may be of any length, and a reason is kept for every invalid record.
func quoteAtMost(s string, n int) string {
	if len(s) <= n {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:n], len(s))
}
