package scheduling

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// assumeTTL is how long a binding this scheduler made is counted before the
// cache shows it. The informer normally catches up within a second; an
// entry that outlives this belongs to a write the cache will never show
// (the object was deleted, or replaced by another of the same name), and
// forgetting it is safe: a stale copy cannot be bound twice, because a
// binding is written with the copy's resourceVersion.
const assumeTTL = 2 * time.Minute

// assumeCache remembers bindings this scheduler made until the cache shows
// them, so decisions in between count them (as kube-scheduler assumes pods).
// Entries are per object, not per name: a HostedClusterDeployment deleted
// and created again under the same name is a new object that is not bound,
// and the old one's binding no longer counts as load.
type assumeCache struct {
	now     func() time.Time
	mu      sync.Mutex
	entries map[types.NamespacedName]assumedBinding
	// byCluster indexes entries by cluster: a decision asks for every
	// candidate's, and a burst has hundreds of bindings in flight when the
	// informer lags behind the writes.
	byCluster map[string]map[types.NamespacedName]struct{}
}

type assumedBinding struct {
	uid      types.UID
	cluster  string
	occupies []string
	expires  time.Time
}

func newAssumeCache(now func() time.Time) *assumeCache {
	return &assumeCache{now: now, entries: map[types.NamespacedName]assumedBinding{}, byCluster: map[string]map[types.NamespacedName]struct{}{}}
}

func (a *assumeCache) assume(key types.NamespacedName, uid types.UID, cluster string, occupies []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.deleteLocked(key)
	a.entries[key] = assumedBinding{uid: uid, cluster: cluster, occupies: occupies, expires: a.now().Add(assumeTTL)}
	keys := a.byCluster[cluster]
	if keys == nil {
		keys = map[types.NamespacedName]struct{}{}
		a.byCluster[cluster] = keys
	}
	keys[key] = struct{}{}
}

// deleteLocked drops key's entry, if any.
func (a *assumeCache) deleteLocked(key types.NamespacedName) {
	e, ok := a.entries[key]
	if !ok {
		return
	}
	delete(a.entries, key)
	if keys := a.byCluster[e.cluster]; keys != nil {
		delete(keys, key)
		if len(keys) == 0 {
			delete(a.byCluster, e.cluster)
		}
	}
}

// forget drops key's entry; with a uid, only if it is that object's.
func (a *assumeCache) forget(key types.NamespacedName, uid types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if e, ok := a.entries[key]; ok && (uid == "" || e.uid == uid) {
		a.deleteLocked(key)
	}
}

// holds reports whether the object uid under key is assumed bound. An entry
// of another object under the same name, or an expired one, is dropped.
func (a *assumeCache) holds(key types.NamespacedName, uid types.UID) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.entries[key]
	if !ok {
		return false
	}
	if e.uid != uid || !a.now().Before(e.expires) {
		a.deleteLocked(key)
		return false
	}
	return true
}

// on returns the live assumed bindings to cluster, by object, with what
// each occupies.
func (a *assumeCache) on(cluster string) map[types.UID][]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	out := map[types.UID][]string{}
	for k := range a.byCluster[cluster] {
		e := a.entries[k]
		if !now.Before(e.expires) {
			a.deleteLocked(k)
			continue
		}
		out[e.uid] = e.occupies
	}
	return out
}
