package consoleapi

import (
	"context"
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	certutil "k8s.io/client-go/util/cert"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
)

// certInterval is how often the certificate directory is looked at until
// the pair is there, and then how often certwatcher re-reads it besides
// its file watch (its own default).
const certInterval = 10 * time.Second

// servingCert is the endpoint's serving certificate: the pair in dir once
// it is there, watched by controller-runtime's certwatcher from then on,
// and a self-signed one until then. The hub mounts the service CA's Secret
// optional: it may appear after the hub started (the Service annotated
// later, the service CA slow), and a hub that read it only at start would
// serve the self-signed certificate, which the console's proxy does not
// trust, until its next restart.
type servingCert struct {
	crt, key string
	interval time.Duration
	fallback *tls.Certificate

	mu      sync.RWMutex
	watcher *certwatcher.CertWatcher
}

// newServingCert is dir's pair (tls.crt, tls.key) once it exists, a
// self-signed certificate until then, or always when dir is "".
func newServingCert(dir string, interval time.Duration) (*servingCert, error) {
	c, k, err := certutil.GenerateSelfSignedCertKey("localhost", []net.IP{{127, 0, 0, 1}}, nil)
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(c, k)
	if err != nil {
		return nil, err
	}
	s := &servingCert{interval: interval, fallback: &pair}
	if dir != "" {
		s.crt, s.key = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	}
	return s, nil
}

// GetCertificate is tls.Config's: the watched pair, else the self-signed
// one.
func (s *servingCert) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	s.mu.RLock()
	w := s.watcher
	s.mu.RUnlock()
	if w != nil {
		if c, _ := w.GetCertificate(hello); c != nil {
			return c, nil
		}
	}
	return s.fallback, nil
}

// Run waits until the pair is there and loads, then has certwatcher keep
// it current until ctx ends. Without a directory it returns at once.
func (s *servingCert) Run(ctx context.Context) error {
	if s.crt == "" {
		return nil
	}
	var w *certwatcher.CertWatcher
	logged := false
	// The condition never fails: the poll ends with the pair loaded, or
	// with ctx (w stays nil).
	_ = wait.PollUntilContextCancel(ctx, s.interval, true, func(context.Context) (bool, error) {
		if !exists(s.crt) || !exists(s.key) {
			return false, nil
		}
		var err error
		if w, err = certwatcher.New(s.crt, s.key); err != nil {
			// Half written (one file of a rotation), or not a pair yet:
			// the next look may find it whole.
			if !logged {
				ctrl.Log.WithName("console-api").Info("serving certificate not loadable yet; serving a self-signed one", "error", err.Error())
				logged = true
			}
			return false, nil
		}
		return true, nil
	})
	if w == nil {
		return nil // ctx ended before the pair came: nothing to watch
	}
	w = w.WithWatchInterval(s.interval)
	s.mu.Lock()
	s.watcher = w
	s.mu.Unlock()
	ctrl.Log.WithName("console-api").Info("serving the certificate", "dir", filepath.Dir(s.crt))
	return w.Start(ctx)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
