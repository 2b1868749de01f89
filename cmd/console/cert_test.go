package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// writePair writes a self-signed certificate named cn and its key.
func writePair(t *testing.T, certFile, keyFile, cn string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func commonName(t *testing.T, c *servingCert) string {
	t.Helper()
	got, err := c.GetCertificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(got.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf.Subject.CommonName
}

// A rotated pair is served from the next handshake on; a half-written or
// vanished one leaves the last good pair in service; no pair at start is
// an error.
func TestServingCertRotation(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if _, err := loadServingCert(certFile, keyFile); err == nil {
		t.Fatal("no certificate at start: accepted")
	}
	writePair(t, certFile, keyFile, "first")
	c, err := loadServingCert(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if cn := commonName(t, c); cn != "first" {
		t.Fatalf("serving %q, want first", cn)
	}
	// The kubelet swaps the files; mtimes may not move within the
	// file system's resolution, sizes may: both are compared.
	writePair(t, certFile, keyFile, "second, rotated")
	later := time.Now().Add(time.Minute)
	for _, f := range []string{certFile, keyFile} {
		if err := os.Chtimes(f, later, later); err != nil {
			t.Fatal(err)
		}
	}
	if cn := commonName(t, c); cn != "second, rotated" {
		t.Errorf("after rotation serving %q, want the rotated certificate", cn)
	}
	if err := os.WriteFile(keyFile, bytes.Repeat([]byte("x"), 10), 0o600); err != nil {
		t.Fatal(err)
	}
	if cn := commonName(t, c); cn != "second, rotated" {
		t.Errorf("with a half-written pair serving %q, want the last good one", cn)
	}
	if err := os.Remove(certFile); err != nil {
		t.Fatal(err)
	}
	if cn := commonName(t, c); cn != "second, rotated" {
		t.Errorf("with the files gone serving %q, want the last good one", cn)
	}
}
