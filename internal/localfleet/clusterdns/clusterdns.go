// Package clusterdns is the local fleet's stand-in for a management
// cluster's DNS and Service network (CoreDNS's kubernetes plugin and
// kube-proxy together), as the programs the kubelet stand-in runs see them.
// Nothing here has a Service network: every in-process program shares the
// test process's loopback. So whoever plays the component behind a Service
// (the HyperShift stand-in for a hosted control plane's kube-apiserver
// Service) registers the real listener behind the Service's name and port,
// and the kubelet stand-in hands each program a dialer for its pod's
// namespace (Dialer), which resolves Service names the way a pod's resolver
// does with the resolv.conf the kubelet writes:
//
//	search <namespace>.svc.cluster.local svc.cluster.local cluster.local
//
// so "kube-apiserver", "kube-apiserver.<namespace>",
// "kube-apiserver.<namespace>.svc" and
// "kube-apiserver.<namespace>.svc.cluster.local" all reach the same Service.
// Only Services of the pod's own namespace resolve: a hosted control-plane
// namespace is isolated by HyperShift's NetworkPolicies, so the stand-in
// does not give other namespaces' programs a route the real cluster would
// refuse. Names outside the cluster domain go to the real resolver and
// network, as a pod's would.
//
// Test and demo infrastructure only; never used by product code.
package clusterdns

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
)

// Domain is the cluster domain (the kubelet's --cluster-domain default).
const Domain = "cluster.local"

// DialFunc is net.Dialer.DialContext's shape.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// Table is one management cluster's Services, as the stand-ins register
// them. The zero value is empty and ready.
type Table struct {
	mu       sync.Mutex
	services map[string]map[int32]string // "<namespace>/<name>" → port → real address
}

// Set makes the Service namespace/name answer on port at target (host:port
// of the real listener).
func (t *Table) Set(namespace, name string, port int32, target string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.services == nil {
		t.services = map[string]map[int32]string{}
	}
	key := namespace + "/" + name
	if t.services[key] == nil {
		t.services[key] = map[int32]string{}
	}
	t.services[key][port] = target
}

// Remove forgets the Service namespace/name (deleted, or made unreachable
// on purpose).
func (t *Table) Remove(namespace, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.services, namespace+"/"+name)
}

// Dialer is the network of a pod in namespace: Service names of that
// namespace reach their registered listeners, other names of the cluster
// domain do not resolve, and everything else goes to next (the real
// network when nil).
func (t *Table) Dialer(namespace string, next DialFunc) DialFunc {
	if next == nil {
		next = (&net.Dialer{}).DialContext
	}
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, portText, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		service, inCluster := t.serviceName(namespace, host)
		if !inCluster {
			return next(ctx, network, address)
		}
		port, err := strconv.ParseInt(portText, 10, 32)
		if err != nil {
			return nil, err
		}
		t.mu.Lock()
		ports, ok := t.services[namespace+"/"+service]
		target, open := ports[int32(port)]
		t.mu.Unlock()
		if !ok {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		if !open {
			// A ClusterIP with no such port: kube-proxy has no rule, the
			// connection goes nowhere.
			return nil, &net.OpError{Op: "dial", Net: network, Err: fmt.Errorf("connection refused: Service %s/%s has no port %d", namespace, service, port)}
		}
		return next(ctx, network, target)
	}
}

// serviceName reads host as a pod of namespace resolves it through its
// search path: the Service's name when host is one of namespace's Services'
// names (short or qualified), and whether host is a cluster name at all
// (which then never leaves the cluster's DNS).
func (t *Table) serviceName(namespace, host string) (string, bool) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if net.ParseIP(host) != nil {
		return "", false
	}
	for _, suffix := range []string{"." + namespace + ".svc." + Domain, "." + namespace + ".svc", "." + namespace} {
		if name, ok := strings.CutSuffix(host, suffix); ok && !strings.Contains(name, ".") {
			return name, true
		}
	}
	if strings.HasSuffix(host, ".svc."+Domain) || strings.HasSuffix(host, ".svc") || strings.HasSuffix(host, "."+Domain) {
		// Another namespace's Service: isolated (see the package comment).
		return "", true
	}
	if !strings.Contains(host, ".") {
		// A short name: the first search domain, <namespace>.svc.cluster.local.
		return host, true
	}
	return "", false
}
