package sops

import (
	"bytes"
	"encoding/json"
	"regexp"

	"github.com/getsops/sops/v3/cmd/sops/formats"
)

var (
	yamlMeta   = regexp.MustCompile(`(?m)^sops:`)
	dotenvMeta = regexp.MustCompile(`(?m)^sops_[a-z_]+=`)
	iniMeta    = regexp.MustCompile(`(?m)^\[sops\]`)
	// encValue is how SOPS writes every encrypted value.
	encValue = []byte("ENC[AES256_GCM,")
)

// looksEncrypted decides, cheaply, whether data is a SOPS document in the
// format its name implies. A file with SOPS values but no metadata is
// reported as encrypted too, so that decrypting it fails instead of
// handing ciphertext to the cluster.
func looksEncrypted(format formats.Format, data []byte) bool {
	if !bytes.Contains(data, []byte("sops")) && !bytes.Contains(data, encValue) {
		return false
	}
	if bytes.Contains(data, encValue) {
		return true
	}
	switch format {
	case formats.Yaml:
		return yamlMeta.Match(data)
	case formats.Dotenv:
		return dotenvMeta.Match(data)
	case formats.Ini:
		return iniMeta.Match(data)
	default: // JSON and SOPS's binary format (a JSON document)
		trimmed := bytes.TrimSpace(data)
		if len(trimmed) == 0 || trimmed[0] != '{' {
			return false
		}
		var top map[string]json.RawMessage
		if json.Unmarshal(trimmed, &top) != nil {
			return false
		}
		_, ok := top["sops"]
		return ok
	}
}
