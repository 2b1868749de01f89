package consoleapi

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Server serves a Handler over HTTPS on every hub replica (the endpoint
// only reads: it needs no leader).
type Server struct {
	// BindAddress is host:port.
	BindAddress string
	// CertDir holds tls.crt and tls.key (on OpenShift, the service CA's
	// serving certificate for the hub's console Service, which the
	// console's proxy trusts), picked up when they appear and reloaded
	// when they change (servingCert). Empty or until they are there: a
	// self-signed certificate, as controller-runtime's metrics server
	// serves without one.
	CertDir string
	Handler http.Handler
}

// NeedLeaderElection: every replica serves.
func (s *Server) NeedLeaderElection() bool { return false }

// Start serves until ctx ends.
func (s *Server) Start(ctx context.Context) error {
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS12,
		// HTTP/1.1 only, as the metrics server (kubeutil.SecureMetrics):
		// HTTP/2's rapid-reset flaws let an unauthenticated caller tie
		// the server up.
		NextProtos: []string{"http/1.1"},
	}
	cert, err := newServingCert(s.CertDir, certInterval)
	if err != nil {
		return err
	}
	go func() {
		if err := cert.Run(ctx); err != nil {
			ctrl.Log.WithName("console-api").Error(err, "certificate watcher")
		}
	}()
	cfg.GetCertificate = cert.GetCertificate
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", s.BindAddress)
	if err != nil {
		return fmt.Errorf("console API: %w", err)
	}
	srv := &http.Server{Handler: s.Handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(tls.NewListener(l, cfg)); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
