package localfleet

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// certificateAuthority signs the serving and client certificates of one
// cluster. Its certificate is the apiserver's --client-ca-file and the
// kube-controller-manager's CSR signing certificate, so certificates issued
// through the CSR API authenticate exactly like the ones we issue here.
type certificateAuthority struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
	keyPEM  []byte
}

func newCertificateAuthority(commonName string) (*certificateAuthority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	// An hour of slack for clocks; client-go sets the rest (ten years,
	// CertSign, a random serial).
	cert, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: commonName, NotBefore: time.Now().Add(-time.Hour)}, key)
	if err != nil {
		return nil, err
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, err
	}
	certPEM, err := certutil.EncodeCertificates(cert)
	if err != nil {
		return nil, err
	}
	return &certificateAuthority{cert: cert, key: key, certPEM: certPEM, keyPEM: keyPEM}, nil
}

// keyPair is a PEM-encoded certificate and its private key.
type keyPair struct {
	CertPEM []byte
	KeyPEM  []byte
}

// issueServing issues a serving certificate for the loopback addresses and
// the in-cluster names, plus names (a guest's: the Service names its hosted
// control plane is reached by, as HyperShift's kube-apiserver certificate
// carries them).
func (ca *certificateAuthority) issueServing(commonName string, names ...string) (keyPair, error) {
	return ca.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: commonName},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    append([]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}, names...),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")},
	})
}

// issueClient issues a client certificate: the apiserver maps CommonName to
// the user name and Organization to groups.
func (ca *certificateAuthority) issueClient(user string, groups ...string) (keyPair, error) {
	return ca.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

// issue signs tmpl with the CA for a new key. This is the one piece done by
// hand: k8s.io/client-go/util/cert only makes self-signed certificates (its
// GenerateSelfSignedCertKey signs with a CA it creates and throws away, and
// only serving certificates), k8s.io/apiserver has no signer, and
// k8s.io/kubernetes (kubeadm's pkiutil, the CSR signer) is not in the module
// graph. github.com/openshift/library-go/pkg/crypto is, and its CA can sign,
// but only RSA keys it generates itself, behind a serial generator and a
// file-oriented API; one x509.CreateCertificate is simpler.
func (ca *certificateAuthority) issue(tmpl *x509.Certificate) (keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return keyPair{}, err
	}
	now := time.Now()
	tmpl.SerialNumber = randomSerial()
	tmpl.NotBefore = now.Add(-time.Hour)
	tmpl.NotAfter = now.Add(365 * 24 * time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return keyPair{}, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return keyPair{}, err
	}
	certPEM, err := certutil.EncodeCertificates(cert)
	if err != nil {
		return keyPair{}, err
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return keyPair{}, err
	}
	return keyPair{CertPEM: certPEM, KeyPEM: keyPEM}, nil
}

// newServiceAccountKey generates the RSA key the apiserver signs
// service-account tokens with (TokenRequest is how the OCM bootstrap identity
// gets its token, as on a real hub).
func newServiceAccountKey() (privPEM, pubPEM []byte, err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, err
	}
	privPEM, err = keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, nil, err
	}
	// keyutil parses public keys but has no encoder for them.
	return privPEM, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), nil
}

func randomSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return n
}

func writeFiles(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}
