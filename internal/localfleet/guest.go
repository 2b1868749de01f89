package localfleet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// StartGuest starts a control plane for a hosted cluster: one more
// kube-apiserver and kube-controller-manager on the fleet's etcd, under its
// own prefix, named name (unique within the fleet; it names the etcd prefix,
// the state directory and the log files). It returns the running one if
// name is already started. servingNames are more DNS names its serving
// certificate carries (the in-cluster Service names a hosted control plane
// is reached by); they take effect only when it starts.
func (f *Fleet) StartGuest(ctx context.Context, name string, servingNames ...string) (*Cluster, error) {
	f.mu.Lock()
	if c, ok := f.guests[name]; ok {
		f.mu.Unlock()
		return c, nil
	}
	f.mu.Unlock()
	if f.ctx.Err() != nil {
		return nil, fmt.Errorf("the local fleet is stopping")
	}
	binDir, err := binaryDir()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	nice := f.opts.ManagementClusterNice // ReniceManagementClusters changes it
	f.mu.Unlock()
	c, err := startCluster(ctx, binDir, filepath.Join(f.Dir, name), name, f.etcd.clientURL, 0, nice, servingNames...)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if other, ok := f.guests[name]; ok { // started concurrently
		go c.stop()
		return other, nil
	}
	if f.guests == nil {
		f.guests = map[string]*Cluster{}
	}
	f.guests[name] = c
	return c, nil
}

// Guest is the running guest control plane name, if any.
func (f *Fleet) Guest(name string) (*Cluster, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.guests[name]
	return c, ok
}

// StopGuest stops the guest control plane name and removes its state
// directory; unknown names are ignored.
func (f *Fleet) StopGuest(name string) {
	f.mu.Lock()
	c, ok := f.guests[name]
	delete(f.guests, name)
	f.mu.Unlock()
	if ok {
		c.stop()
		_ = os.RemoveAll(c.Dir)
	}
}
