package clusterdns

import (
	"context"
	"errors"
	"net"
	"testing"
)

// TestDialer proves a pod's names reach the registered listener through its
// search path, and that other namespaces, unknown Services and unknown
// ports do not.
func TestDialer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	var table Table
	table.Set("clusters-a", "kube-apiserver", 6443, ln.Addr().String())
	dial := table.Dialer("clusters-a", nil)
	for _, addr := range []string{"kube-apiserver:6443", "kube-apiserver.clusters-a:6443", "kube-apiserver.clusters-a.svc:6443",
		"kube-apiserver.clusters-a.svc.cluster.local:6443", "KUBE-APISERVER.clusters-a.svc.cluster.local.:6443"} {
		c, err := dial(context.Background(), "tcp", addr)
		if err != nil {
			t.Errorf("%s: %v", addr, err)
			continue
		}
		_ = c.Close()
	}
	var dnsErr *net.DNSError
	for _, addr := range []string{"kube-apiserver.clusters-b.svc:6443", "other:6443"} {
		if _, err := dial(context.Background(), "tcp", addr); !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
			t.Errorf("%s: want no such host, got %v", addr, err)
		}
	}
	if _, err := dial(context.Background(), "tcp", "kube-apiserver:443"); err == nil {
		t.Error("a port the Service does not have was reachable")
	}
	// Another namespace's pod does not see this Service by its short name.
	if _, err := table.Dialer("clusters-b", nil)(context.Background(), "tcp", "kube-apiserver:6443"); !errors.As(err, &dnsErr) {
		t.Errorf("another namespace: want no such host, got %v", err)
	}
	table.Remove("clusters-a", "kube-apiserver")
	if _, err := dial(context.Background(), "tcp", "kube-apiserver:6443"); !errors.As(err, &dnsErr) {
		t.Errorf("after Remove: want no such host, got %v", err)
	}
	// Names outside the cluster go to the next dialer.
	called := false
	next := func(context.Context, string, string) (net.Conn, error) { called = true; return nil, errors.New("next") }
	_, _ = table.Dialer("clusters-a", next)(context.Background(), "tcp", "api.example.com:6443")
	if !called {
		t.Error("a name outside the cluster did not go to the next dialer")
	}
}
