package sops

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"filippo.io/age"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// AgeKeySuffix marks the data keys of a Secret that hold age identities
// (Flux's convention for its sops-age Secret: "identity.agekey").
const AgeKeySuffix = ".agekey"

// ReadAgeKeyFile returns the age identities in the file at path (age's
// keys.txt format: one AGE-SECRET-KEY-1... per line, # comments). The error
// names the file, never its content.
func ReadAgeKeyFile(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: age key file %s: %v", ErrKeySource, path, err)
	}
	if _, err := age.ParseIdentities(strings.NewReader(string(data))); err != nil {
		return nil, fmt.Errorf("%w: age key file %s: not an age identity file", ErrKeySource, path)
	}
	return []string{string(data)}, nil
}

// AgeKeysFromSecret returns the age identities a Secret holds: every data
// entry whose key ends in ".agekey". A Secret without one is an error
// naming it.
func AgeKeysFromSecret(s *corev1.Secret) ([]string, error) {
	var names []string
	for k := range s.Data {
		if strings.HasSuffix(k, AgeKeySuffix) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: Secret %s/%s has no %s entry", ErrKeySource, s.Namespace, s.Name, "*"+AgeKeySuffix)
	}
	var out []string
	for _, k := range names {
		if _, err := age.ParseIdentities(strings.NewReader(string(s.Data[k]))); err != nil {
			return nil, fmt.Errorf("%w: Secret %s/%s entry %s: not an age identity", ErrKeySource, s.Namespace, s.Name, k)
		}
		out = append(out, string(s.Data[k]))
	}
	return out, nil
}

// LoadAgeKeysFromSecret reads the Secret namespace/name and returns its age
// identities (see AgeKeysFromSecret). The read is bounded by timeout (30 s
// when zero).
func LoadAgeKeysFromSecret(ctx context.Context, client kubernetes.Interface, namespace, name string, timeout time.Duration) ([]string, error) {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	s, err := client.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("%w: Secret %s/%s: %v", ErrKeySource, namespace, name, err)
	}
	return AgeKeysFromSecret(s)
}

// parseIdentities parses every identity string and returns the identities
// and their public recipients.
func parseIdentities(keys []string) ([]age.Identity, []string, error) {
	var ids []age.Identity
	var recipients []string
	for i, k := range keys {
		parsed, err := age.ParseIdentities(strings.NewReader(k))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: Options.AgeKeys[%d]: not an age identity", ErrKeySource, i)
		}
		for _, id := range parsed {
			switch id := id.(type) {
			case *age.X25519Identity:
				recipients = append(recipients, id.Recipient().String())
			case *age.HybridIdentity:
				recipients = append(recipients, id.Recipient().String())
			default:
				recipients = append(recipients, fmt.Sprintf("%T", id))
			}
		}
		ids = append(ids, parsed...)
	}
	sort.Strings(recipients)
	return ids, recipients, nil
}
