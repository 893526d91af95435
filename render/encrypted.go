package render

import (
	"bytes"
	"errors"
	"fmt"

	yaml "go.yaml.in/yaml/v3"
)

// ErrEncrypted is wrapped by every *EncryptedError.
var ErrEncrypted = errors.New("file is SOPS-encrypted")

// EncryptedError is a SOPS-encrypted file that reached a tool undecrypted:
// no Decryptor is configured, or the configured one did not recognise the
// file. Rendering it would hand ciphertext (and the sops: metadata) to the
// cluster, so the render fails instead. It names the file only.
type EncryptedError struct {
	// Path is the file, slash-separated and relative to the tree (or as
	// the application named it, for a Helm value file).
	Path string
}

// Error implements error.
func (e *EncryptedError) Error() string {
	return fmt.Sprintf("%s is SOPS-encrypted and was not decrypted: configure a decryptor "+
		"(gitops.Options.Decryptor, e.g. sops.New of the github.com/kubegitops/gitops/sops module, "+
		"or render.Decrypting around the renderer)", e.Path)
}

// Unwrap returns ErrEncrypted.
func (e *EncryptedError) Unwrap() error { return ErrEncrypted }

// RefuseEncrypted returns an *EncryptedError naming name when data is a
// SOPS document (see IsSOPS), else nil. The plain renderer calls it on
// every manifest, the Kustomize renderer on every file kustomize reads,
// and the Helm renderer on value files and file parameters; plugins are
// not checked, since a plugin may decrypt on its own.
func RefuseEncrypted(name string, data []byte) error {
	if IsSOPS(data) {
		return &EncryptedError{Path: name}
	}
	return nil
}

// IsSOPS reports whether data is a SOPS-encrypted YAML or JSON document:
// one of its documents is a mapping with a top-level "sops" mapping that
// holds SOPS's metadata ("mac" or "lastmodified"). Data without both
// words is answered without parsing; data that does not parse is not
// SOPS.
func IsSOPS(data []byte) bool {
	if !bytes.Contains(data, []byte("sops")) ||
		(!bytes.Contains(data, []byte("mac")) && !bytes.Contains(data, []byte("lastmodified"))) {
		return false
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			// The end of the stream, or not YAML (nor JSON) from here
			// on. Aliases are not expanded when decoding into a Node.
			return false
		}
		if sopsMetadata(&doc) {
			return true
		}
	}
}

// sopsMetadata reports whether doc is a mapping whose "sops" key holds a
// mapping with "mac" or "lastmodified".
func sopsMetadata(doc *yaml.Node) bool {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return false
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value != "sops" || top.Content[i+1].Kind != yaml.MappingNode {
			continue
		}
		meta := top.Content[i+1]
		for j := 0; j+1 < len(meta.Content); j += 2 {
			if k := meta.Content[j].Value; k == "mac" || k == "lastmodified" {
				return true
			}
		}
	}
	return false
}
