//go:build integration

package console

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
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/hcp-fleet/hcp-fleet/internal/poll"
)

// AssetServer runs the shipped asset server, hcp-fleet-console (cmd/console,
// built here), on the plugin's build with a certificate of a CA made for
// it, as the service CA makes one for the Service: the browser then loads
// the plugin from the server the ConsolePlugin points the console at, with
// its content types, nosniff and caching, not from a test file server.
type AssetServer struct {
	URL *url.URL
	// CA trusts the server's certificate (the console trusts the service
	// CA's).
	CA   *x509.CertPool
	stop func()
}

// StartAssetServer builds cmd/console into dir, writes a CA and a serving
// certificate for 127.0.0.1 there, starts the server on assets and waits
// for /healthz.
func StartAssetServer(repo, dir, assets string) (*AssetServer, error) {
	bin := filepath.Join(dir, "hcp-fleet-console")
	build := exec.Command("go", "build", "-o", bin, "./cmd/console")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build ./cmd/console: %v\n%s", err, out)
	}
	pool, err := writeServingCert(dir)
	if err != nil {
		return nil, err
	}
	// A free port: the server takes an address, and says nothing back.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	_ = l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--assets", assets, "--bind-address", addr,
		"--tls-cert-file", filepath.Join(dir, "tls.crt"), "--tls-key-file", filepath.Join(dir, "tls.key"))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, err
	}
	s := &AssetServer{URL: &url.URL{Scheme: "https", Host: addr}, CA: pool, stop: func() { cancel(); _ = cmd.Wait() }}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 5 * time.Second}
	err = poll.Wait(30*time.Second, func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL.String()+"/healthz", nil)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/healthz: %s", resp.Status)
		}
		return nil
	})
	if err != nil {
		s.Stop()
		return nil, fmt.Errorf("hcp-fleet-console did not come up: %w", err)
	}
	return s, nil
}

func (s *AssetServer) Stop() { s.stop() }

// Proxy forwards to the server over TLS, trusting only its CA, with the
// prefix stripped: what the console's /api/plugins/<name>/ proxy does.
func (s *AssetServer) Proxy(prefix string) http.Handler {
	p := httputil.NewSingleHostReverseProxy(s.URL)
	p.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.CA, MinVersion: tls.VersionTLS12}}
	return http.StripPrefix(prefix, p)
}

// writeServingCert writes tls.crt and tls.key for 127.0.0.1, signed by a
// CA of their own, and returns a pool with that CA.
func writeServingCert(dir string) (*x509.CertPool, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test service CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "hcp-fleet-console"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return pool, nil
}
