package scheduling

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// BoundSnapshot is the hub's bound HostedClusterDeployments per management
// cluster, kept up to date from the informer's events (as kube-scheduler
// keeps its node snapshot) so that a decision reads a cluster's load and the
// names taken there in constant time instead of listing its bound
// HostedClusterDeployments for every candidate of every decision.
type BoundSnapshot struct {
	mu        sync.RWMutex
	byUID     map[types.UID]snapshotEntry
	byCluster map[string]*clusterBindings
	// onBound is called (outside the lock) when an object is first seen
	// bound: the scheduler forgets its assumption then, and not earlier,
	// so that no decision in between misses the binding.
	onBound func(key types.NamespacedName, uid types.UID)
}

type snapshotEntry struct {
	cluster  string
	occupies []string
}

type clusterBindings struct {
	count int32
	// occupied counts the bound objects holding each Candidate.Occupied key
	// (two may hold one while a collision is reported).
	occupied map[string]int
}

// NewBoundSnapshot returns an empty snapshot; onBound may be nil.
func NewBoundSnapshot(onBound func(types.NamespacedName, types.UID)) *BoundSnapshot {
	return &BoundSnapshot{byUID: map[types.UID]snapshotEntry{}, byCluster: map[string]*clusterBindings{}, onBound: onBound}
}

// Handler is the informer event handler that keeps the snapshot.
func (s *BoundSnapshot) Handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.Observe(obj) },
		UpdateFunc: func(_, obj any) { s.Observe(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if hcd, ok := obj.(*v1alpha1.HostedClusterDeployment); ok {
				s.remove(hcd.UID)
			}
		},
	}
}

// Observe records hcd's binding (or that it has none).
func (s *BoundSnapshot) Observe(obj any) {
	hcd, ok := obj.(*v1alpha1.HostedClusterDeployment)
	if !ok {
		return
	}
	cluster := hcd.Status.HostingCluster
	if cluster == "" {
		s.remove(hcd.UID)
		return
	}
	s.mu.Lock()
	old, known := s.byUID[hcd.UID]
	if known && old.cluster == cluster {
		s.mu.Unlock()
		return // bindings are set once; later updates change nothing here
	}
	if known {
		s.removeLocked(hcd.UID, old)
	}
	e := snapshotEntry{cluster: cluster, occupies: Occupies(hcd)}
	s.byUID[hcd.UID] = e
	cb := s.byCluster[cluster]
	if cb == nil {
		cb = &clusterBindings{occupied: map[string]int{}}
		s.byCluster[cluster] = cb
	}
	cb.count++
	for _, k := range e.occupies {
		cb.occupied[k]++
	}
	s.mu.Unlock()
	if s.onBound != nil {
		s.onBound(types.NamespacedName{Namespace: hcd.Namespace, Name: hcd.Name}, hcd.UID)
	}
}

func (s *BoundSnapshot) remove(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.byUID[uid]; ok {
		s.removeLocked(uid, e)
	}
}

func (s *BoundSnapshot) removeLocked(uid types.UID, e snapshotEntry) {
	delete(s.byUID, uid)
	cb := s.byCluster[e.cluster]
	cb.count--
	for _, k := range e.occupies {
		if cb.occupied[k]--; cb.occupied[k] <= 0 {
			delete(cb.occupied, k)
		}
	}
	if cb.count == 0 {
		delete(s.byCluster, e.cluster)
	}
}

// Count is how many HostedClusterDeployments are bound to cluster.
func (s *BoundSnapshot) Count(cluster string) int32 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if cb := s.byCluster[cluster]; cb != nil {
		return cb.count
	}
	return 0
}

// Holds reports whether the object uid is bound to cluster.
func (s *BoundSnapshot) Holds(cluster string, uid types.UID) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.byUID[uid]
	return ok && e.cluster == cluster
}

// Occupied reports whether a bound HostedClusterDeployment holds key
// (HostedClusterKey, NodePoolKey) on cluster.
func (s *BoundSnapshot) Occupied(cluster, key string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	cb := s.byCluster[cluster]
	return cb != nil && cb.occupied[key] > 0
}
