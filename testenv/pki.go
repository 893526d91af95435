package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// pki holds the files the API server needs: a CA and a serving certificate
// for loopback, the service-account signing key pair and the token file
// that defines the admin and the extra users.
type pki struct {
	caPEM               []byte
	certFile, keyFile   string
	saPublic, saPrivate string
	tokenFile           string
	adminToken          string
	userTokens          map[string]string
}

func newPKI(dir string, users []User) (*pki, error) {
	p := &pki{userTokens: map[string]string{}}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "testenv-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	p.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})

	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP("10.96.0.1")},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	srvKeyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		return nil, err
	}
	p.certFile, p.keyFile = filepath.Join(dir, "apiserver.crt"), filepath.Join(dir, "apiserver.key")
	if err := writePEM(p.certFile, "CERTIFICATE", srvDER); err != nil {
		return nil, err
	}
	if err := writePEM(p.keyFile, "EC PRIVATE KEY", srvKeyDER); err != nil {
		return nil, err
	}

	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	p.saPublic, p.saPrivate = filepath.Join(dir, "sa.pub"), filepath.Join(dir, "sa.key")
	if err := writePEM(p.saPublic, "PUBLIC KEY", saPub); err != nil {
		return nil, err
	}
	if err := writePEM(p.saPrivate, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey)); err != nil {
		return nil, err
	}

	// tokens.csv: token,user,uid,"group1,group2"
	var lines []string
	p.adminToken = randomToken()
	lines = append(lines, fmt.Sprintf("%s,admin,admin,system:masters", p.adminToken))
	for i, u := range users {
		if u.Name == "" || strings.ContainsAny(u.Name, ",\"\n") || u.Name == "admin" {
			return nil, fmt.Errorf("testenv: user name %q is empty, reserved or holds a comma or quote", u.Name)
		}
		if _, dup := p.userTokens[u.Name]; dup {
			return nil, fmt.Errorf("testenv: user %q given twice", u.Name)
		}
		tok := randomToken()
		p.userTokens[u.Name] = tok
		line := fmt.Sprintf("%s,%s,user-%d", tok, u.Name, i)
		if len(u.Groups) > 0 {
			line += fmt.Sprintf(",\"%s\"", strings.Join(u.Groups, ","))
		}
		lines = append(lines, line)
	}
	p.tokenFile = filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(p.tokenFile, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return nil, err
	}
	return p, nil
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

func randomToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported systems
	}
	return hex.EncodeToString(b)
}
