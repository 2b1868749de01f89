package main

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"
)

// servingCert is the serving certificate and key files, re-read when either
// changes: the service CA rotates the Secret, the kubelet swaps the mounted
// files, and the next handshake gets the new certificate without a restart.
// A stat per handshake instead of a file watch: inotify instances are a
// per-user limit a busy node can run out of, and a server that cannot
// start for that reason serves nothing.
type servingCert struct {
	certFile, keyFile string

	mu                sync.Mutex
	cert              *tls.Certificate
	certMod, keyMod   time.Time
	certSize, keySize int64
}

// loadServingCert reads the pair once, so that a missing or bad one stops
// the server at start.
func loadServingCert(certFile, keyFile string) (*servingCert, error) {
	c := &servingCert{certFile: certFile, keyFile: keyFile}
	if _, err := c.GetCertificate(nil); err != nil {
		return nil, err
	}
	return c, nil
}

// GetCertificate is tls.Config's: the pair, re-read if either file changed.
// While a rotation is half written (one file new, the other old) the pair
// does not load: the last good one serves until both are in place.
func (c *servingCert) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	cs, err := os.Stat(c.certFile)
	if err != nil {
		return c.last(err)
	}
	ks, err := os.Stat(c.keyFile)
	if err != nil {
		return c.last(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cert != nil && cs.ModTime().Equal(c.certMod) && ks.ModTime().Equal(c.keyMod) && cs.Size() == c.certSize && ks.Size() == c.keySize {
		return c.cert, nil
	}
	pair, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		if c.cert != nil {
			return c.cert, nil
		}
		return nil, fmt.Errorf("serving certificate %s, key %s: %w", c.certFile, c.keyFile, err)
	}
	c.cert, c.certMod, c.keyMod, c.certSize, c.keySize = &pair, cs.ModTime(), ks.ModTime(), cs.Size(), ks.Size()
	return c.cert, nil
}

func (c *servingCert) last(err error) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cert != nil {
		return c.cert, nil
	}
	return nil, fmt.Errorf("serving certificate: %w", err)
}
