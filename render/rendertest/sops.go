package rendertest

import _ "embed" // the SOPS fixtures

// SOPS documents made as the sops CLI makes them (age recipient, SOPS
// 3.13.3), for the tests that check an encrypted file is never rendered
// as if it were plain. The identity that opens them was thrown away.
var (
	// SOPSSecretYAML is a Secret "db" whose stringData is encrypted, in
	// YAML.
	//
	//go:embed testdata/sops/secret.enc.yaml
	SOPSSecretYAML string
	// SOPSSecretJSON is the same Secret in JSON.
	//
	//go:embed testdata/sops/secret.enc.json
	SOPSSecretJSON string
	// SOPSValuesYAML is a Helm values file with every value encrypted.
	//
	//go:embed testdata/sops/values.enc.yaml
	SOPSValuesYAML string
)
