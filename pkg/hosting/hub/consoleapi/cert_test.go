package consoleapi

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hcp-fleet/hcp-fleet/internal/poll"
)

// writePair writes a self-signed certificate named cn and its key to dir,
// each file replaced whole (a rename), as the kubelet swaps a Secret
// volume's files.
func writePair(t *testing.T, dir, cn string) {
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
	for name, data := range map[string][]byte{
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
	} {
		tmp := filepath.Join(dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

func servedName(c *servingCert) (string, error) {
	got, err := c.GetCertificate(&tls.ClientHelloInfo{})
	if err != nil {
		return "", err
	}
	leaf, err := x509.ParseCertificate(got.Certificate[0])
	if err != nil {
		return "", err
	}
	return leaf.Subject.CommonName, nil
}

// A certificate mounted after the start is served from then on, and a
// rotated one replaces it, without a restart; until the first arrives the
// endpoint serves its self-signed certificate.
func TestServingCertArrivesAndRotates(t *testing.T) {
	dir := t.TempDir()
	c, err := newServingCert(dir, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	if cn, err := servedName(c); err != nil || !strings.HasPrefix(cn, "localhost") {
		t.Fatalf("before the Secret is mounted: %q %v, want the self-signed localhost certificate", cn, err)
	}
	for _, cn := range []string{"mounted later", "rotated"} {
		writePair(t, dir, cn)
		poll.Until(t, 30*time.Second, "serving "+cn, func(context.Context) error {
			got, err := servedName(c)
			if err != nil {
				return err
			}
			if got != cn {
				return fmt.Errorf("serving %q", got)
			}
			return nil
		})
	}
}

// Without a directory the self-signed certificate serves and nothing is
// watched.
func TestServingCertWithoutDir(t *testing.T) {
	c, err := newServingCert("", time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if cn, err := servedName(c); err != nil || !strings.HasPrefix(cn, "localhost") {
		t.Fatalf("%q %v, want the self-signed localhost certificate", cn, err)
	}
}
