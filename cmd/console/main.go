// Command hcp-fleet-console serves the hcp-fleet console plugin's built
// assets (console/dist, docs/console.md) to the OpenShift console, which
// fetches them through its proxy from the Service a ConsolePlugin names
// (manifests/console). It serves files only: no API access, no
// ServiceAccount token, no writes; HTTPS with the serving certificate
// OpenShift's service CA issues for the Service, re-read when rotated.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// DefaultAssetsDir is where the image carries the build (hack/images,
// images/console.Containerfile).
const DefaultAssetsDir = "/usr/share/hcp-fleet-console"

func main() {
	fs := flag.NewFlagSet("hcp-fleet-console", flag.ContinueOnError)
	dir := fs.String("assets", DefaultAssetsDir, "Directory of the plugin's build (plugin-manifest.json and the chunks).")
	addr := fs.String("bind-address", ":9443", "Address to serve HTTPS on.")
	cert := fs.String("tls-cert-file", "/var/serving-cert/tls.crt", "Serving certificate (the service CA's, from the Secret the Service's serving-cert annotation names).")
	key := fs.String("tls-key-file", "/var/serving-cert/tls.key", "Serving certificate's key.")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := run(ctx, *dir, *addr, *cert, *key); err != nil {
		fmt.Fprintln(os.Stderr, "hcp-fleet-console:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir, addr, certFile, keyFile string) error {
	a, err := loadAssets(os.DirFS(dir))
	if err != nil {
		return fmt.Errorf("assets in %s: %w", dir, err)
	}
	// The service CA rotates the Secret's certificate; it is re-read when
	// it changes, so that the pod need not restart.
	cert, err := loadServingCert(certFile, keyFile)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Addr:              addr,
		Handler:           newMux(a),
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: cert.GetCertificate},
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
	}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	fmt.Fprintf(os.Stderr, "hcp-fleet-console: serving %d files of %s on %s\n", len(a.files), dir, addr)
	if err := srv.ListenAndServeTLS("", ""); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
