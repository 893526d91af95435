package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	"github.com/kubegitops/gitops/render"
	"github.com/kubegitops/gitops/render/execdecrypt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ageKeyEnv prefixes the environment variables through which the age keys
// of -sops-age-key-secret reach gitops-sops (never written to disk).
const ageKeyEnv = "GITOPS_SOPS_AGE_KEY_"

// sopsDecryptor returns the decryptor of -sops, -sops-age-key-file and
// -sops-age-key-secret: gitops-sops, the program of the
// github.com/kubegitops/gitops/sops module, run by render/execdecrypt (the
// operator is built from the library's module, which does not link SOPS
// and its cloud SDKs). nil when none of the flags is given. A program that
// is missing, or a key file that does not parse, stops the start (a flag
// is wrong); a key Secret that is missing or holds no age key is logged
// naming it, and the operator runs without its keys: apps whose files
// need them get a ComparisonError naming the file.
func sopsDecryptor(ctx context.Context, kube kubernetes.Interface, f flags, log logr.Logger) (render.Decryptor, error) {
	if f.sopsCommand == "" && len(f.sopsKeyFiles) == 0 && f.sopsKeySecret == "" {
		return nil, nil
	}
	opts := execdecrypt.Options{Command: f.sopsCommand}
	if opts.Command == "" {
		opts.Command = "gitops-sops"
	}
	for _, file := range f.sopsKeyFiles {
		opts.Args = append(opts.Args, "-age-key-file", file)
	}
	withoutSecret := opts
	if f.sopsKeySecret != "" {
		keys, err := secretAgeKeys(ctx, kube, f.namespace, f.sopsKeySecret)
		if err != nil {
			log.Error(err, "SOPS age keys not read: files that need them will not decrypt")
		}
		for i, k := range keys {
			name := fmt.Sprintf("%s%d", ageKeyEnv, i)
			opts.Args = append(opts.Args, "-age-key-env", name)
			opts.Env = append(opts.Env, name+"="+k)
		}
	}
	d, err := execdecrypt.New(ctx, opts)
	if err != nil && len(opts.Env) > 0 {
		log.Error(err, "SOPS age keys of Secret refused: running without them", "secret", f.namespace+"/"+f.sopsKeySecret)
		d, err = execdecrypt.New(ctx, withoutSecret)
	}
	if err != nil {
		return nil, fmt.Errorf("-sops: %w", err)
	}
	return d, nil
}

// secretAgeKeys returns the age identities of the Secret namespace/name:
// its keys.txt entry (as KSOPS users mount it) and every *.agekey entry
// (Flux's convention), in the order of their names. The error names the
// Secret, never a value.
func secretAgeKeys(ctx context.Context, kube kubernetes.Interface, namespace, name string) ([]string, error) {
	s, err := kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("-sops-age-key-secret: Secret %s/%s does not exist", namespace, name)
	}
	if err != nil {
		return nil, fmt.Errorf("-sops-age-key-secret: Secret %s/%s: %w", namespace, name, err)
	}
	var names []string
	for k := range s.Data {
		if k == "keys.txt" || strings.HasSuffix(k, ".agekey") {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("-sops-age-key-secret: Secret %s/%s has no keys.txt or *.agekey entry", namespace, name)
	}
	keys := make([]string, 0, len(names))
	for _, k := range names {
		keys = append(keys, string(s.Data[k]))
	}
	return keys, nil
}
