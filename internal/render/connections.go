package render

import (
	"fmt"

	"github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// Connections is what targets need beyond their selection to connect: the
// TargetProfiles of the Cluster's namespace and the data of the Secrets they
// name (credentials and TLS), both keyed by name; Secrets also holds those the
// selected Outputs and Inputs take values from (ConfigSecrets). The reconciler
// reads them from its cache; see selection.ProfilesOf, selection.SecretsOf and
// ConfigSecrets.
type Connections struct {
	Profiles map[string]*v1alpha1.TargetProfile
	Secrets  map[string]map[string][]byte
	// TLSOmitted are the TLS Secrets the Cluster's target TLS Secret could not
	// hold (TLSBundle.Omitted), with why: the targets that need them are
	// skipped.
	TLSOmitted map[string]error
	// ReservedPorts are the ports the collectors listen on besides their outputs (their REST API, their gNMI
	// server), each with what listens there in words: an output that listens on one is skipped
	// (PortTakenError).
	ReservedPorts map[int32]string
}

// Keys of a credentials Secret (TargetProfile spec.credentialsRef). A Secret
// holds a username and a password, or a token, or all three.
const (
	UsernameKey = "username"
	PasswordKey = "password"
	TokenKey    = "token"
)

// credentials are the values of a profile's credentials Secret.
type credentials struct {
	username, password, token string
}

// credentialsOf reads the credentials Secret of p. A profile without
// credentialsRef connects without credentials. A Secret must hold a username
// and a password, or a token; everything it holds of the three is sent.
// Errors name the Secret and keys, never values.
func credentialsOf(p *v1alpha1.TargetProfile, secrets map[string]map[string][]byte) (credentials, error) {
	ref := p.Spec.CredentialsRef
	if ref == "" {
		return credentials{}, nil
	}
	data, ok := secrets[ref]
	if !ok {
		return credentials{}, fmt.Errorf("credentials secret %q: %w", ref, ErrSecretNotFound)
	}
	c := credentials{
		username: string(data[UsernameKey]),
		password: string(data[PasswordKey]),
		token:    string(data[TokenKey]),
	}
	switch {
	case c.token != "" || (c.username != "" && c.password != ""):
		return c, nil
	case c.username != "":
		return credentials{}, fmt.Errorf("credentials secret %q: %w %q", ref, ErrSecretKeyMissing, PasswordKey)
	case c.password != "":
		return credentials{}, fmt.Errorf("credentials secret %q: %w %q", ref, ErrSecretKeyMissing, UsernameKey)
	default:
		return credentials{}, fmt.Errorf("credentials secret %q: %w: needs %q and %q, or %q", ref, ErrSecretKeyMissing, UsernameKey, PasswordKey, TokenKey)
	}
}
