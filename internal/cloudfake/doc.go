// Package cloudfake runs, on loopback, fakes of the cloud token endpoints
// that repository credentials are minted at, for tests: Microsoft Entra
// ID's token endpoint (client credentials with a federated token or a
// client secret), an Azure Container Registry (a real OCI registry,
// go-containerregistry's, behind ACR's challenge, refresh-token exchange
// and token server), and Google's OAuth token endpoint (a service
// account's signed JWT). Each checks what a real one checks (the
// federated token, the signature of the JWT, the refresh token it issued)
// and counts the tokens it issues, so a test can see a token reused or
// refreshed. They are fakes only because the real services cannot run
// here.
package cloudfake
