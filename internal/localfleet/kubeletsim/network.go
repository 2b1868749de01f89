package kubeletsim

import (
	"context"
	"net"
)

// DialFunc is net.Dialer.DialContext's shape.
type DialFunc = func(ctx context.Context, network, address string) (net.Conn, error)

// SetNetwork gives the programs started from now on their pod's network:
// network(namespace) is the dialer of a pod in namespace (e.g.
// clusterdns.Table.Dialer). Without it programs get none (DialerFrom is
// nil) and use the process's network as it is.
func (k *Kubelet) SetNetwork(network func(namespace string) DialFunc) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.network = network
}

type dialerKey struct{}

// DialerFrom is the dialer of the pod the program runs in (its ctx), nil
// when the kubelet stand-in has no network for it. The program's wiring
// hands it to the product code as the option a real pod leaves at the
// default net.Dialer.
func DialerFrom(ctx context.Context) DialFunc {
	d, _ := ctx.Value(dialerKey{}).(DialFunc)
	return d
}
