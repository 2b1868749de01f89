package migration

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Step is a step of the migration of one hosted cluster, in order.
type Step string

const (
	// StepPreflight checks the private CRDs serve every kind to migrate and
	// no private CAPI object exists yet, then records the snapshot.
	StepPreflight Step = "preflight"
	// StepPause pauses the standard CAPI Cluster and scales the workloads to 0.
	StepPause Step = "pause"
	// StepWaitScaledDown waits until no pod of the workloads is left.
	StepWaitScaledDown Step = "wait-scaled-down"
	// StepCopy creates the private copies (spec, status, metadata) and adds
	// owner references to them on referrers.
	StepCopy Step = "copy"
	// StepSwitch points the workloads at the proxy and scales them back up.
	StepSwitch Step = "switch"
	// StepHealthCheck waits for the workloads to be available and checks the
	// copies are present and equal to the originals.
	StepHealthCheck Step = "health-check"
	// StepCommit marks the HostedCluster migrated and unpauses the private
	// Cluster. The last step that can fail into a rollback.
	StepCommit Step = "commit"
	// StepCleanup re-points referrers at the copies only and removes the
	// standard objects. Failures here are retried, never rolled back.
	StepCleanup Step = "cleanup"
)

// Steps is the forward order.
var Steps = []Step{StepPreflight, StepPause, StepWaitScaledDown, StepCopy, StepSwitch, StepHealthCheck, StepCommit, StepCleanup}

func (s Step) next() Step {
	for i, x := range Steps {
		if x == s && i+1 < len(Steps) {
			return Steps[i+1]
		}
	}
	return ""
}

// stateConfigMapName is the ConfigMap in the hosted control-plane namespace
// that makes a migration survive a controller restart: the step reached and
// the snapshot of everything rollback restores that is not derivable from the
// objects themselves (the workloads' specs, the Cluster's spec.paused).
const stateConfigMapName = "hcp-fleet-capi-migration"

const (
	stateKey       = "state.json"
	managedByLabel = "app.kubernetes.io/managed-by"
	managedByValue = "hcp-fleet"
)

// state is what stateConfigMapName holds.
type state struct {
	HostedCluster string      `json:"hostedCluster"`
	Started       metav1.Time `json:"started"`
	Step          Step        `json:"step"`
	StepStarted   metav1.Time `json:"stepStarted"`
	// Cluster is the name of the standard CAPI Cluster ("" if there is none).
	Cluster string `json:"cluster,omitempty"`
	// ClusterPaused is the Cluster's spec.paused before the migration, as JSON
	// (absent when the field was not set), so rollback restores it exactly.
	ClusterPaused json.RawMessage `json:"clusterPaused,omitempty"`
	// Workloads are the specs of the workload Deployments before the migration.
	Workloads []workloadSnapshot `json:"workloads"`
	// RollingBack is set once a failure was recorded; FailedStep and Reason
	// say what failed.
	RollingBack bool   `json:"rollingBack,omitempty"`
	FailedStep  Step   `json:"failedStep,omitempty"`
	Reason      string `json:"reason,omitempty"`
}

type workloadSnapshot struct {
	Name   string                `json:"name"`
	Switch Switch                `json:"switch"`
	Spec   appsv1.DeploymentSpec `json:"spec"`
}

func (s *state) toConfigMap(namespace string) (*corev1.ConfigMap, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: stateConfigMapName, Namespace: namespace, Labels: map[string]string{managedByLabel: managedByValue}},
		Data:       map[string]string{stateKey: string(b)},
	}, nil
}

func stateFrom(cm *corev1.ConfigMap) (*state, error) {
	s := &state{}
	if err := json.Unmarshal([]byte(cm.Data[stateKey]), s); err != nil {
		return nil, fmt.Errorf("configmap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return s, nil
}

// Phase is where a hosted cluster stands in the migration.
type Phase string

const (
	// PhasePending: eligible, waiting for its turn (another migration runs).
	PhasePending Phase = "Pending"
	// PhaseMigrating: a step is running.
	PhaseMigrating Phase = "Migrating"
	// PhaseRollingBack: a step failed; the migration is being undone.
	PhaseRollingBack Phase = "RollingBack"
	// PhaseMigrated: on private CAPI types.
	PhaseMigrated Phase = "Migrated"
	// PhaseFailed: rolled back, migration-failed set; waits for SRE.
	PhaseFailed Phase = "Failed"
)

// Progress is the migration status of one hosted cluster, for the agent to
// report (ManagedClusterAddOn condition) and for logs.
type Progress struct {
	HostedCluster types.NamespacedName
	Phase         Phase
	// Step is the current step (Migrating), or the step that failed
	// (RollingBack, Failed).
	Step Step
	// Reason is the failure reason (RollingBack, Failed) or why a step waits.
	Reason string
	Since  time.Time
}

// Tracker keeps the latest Progress of every hosted cluster the controller
// has seen; pass its Record as Options.OnProgress. Safe for concurrent use.
type Tracker struct {
	mu  sync.Mutex
	all map[types.NamespacedName]Progress
}

// Record stores p.
func (t *Tracker) Record(p Progress) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.all == nil {
		t.all = map[types.NamespacedName]Progress{}
	}
	t.all[p.HostedCluster] = p
}

// Get returns the latest Progress of one hosted cluster.
func (t *Tracker) Get(hc types.NamespacedName) (Progress, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p, ok := t.all[hc]
	return p, ok
}

// Forget drops a hosted cluster (deleted, or no longer in the migration's
// scope).
func (t *Tracker) Forget(hc types.NamespacedName) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.all, hc)
}

// All returns the latest Progress of every hosted cluster, by namespace and
// name.
func (t *Tracker) All() []Progress {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Progress, 0, len(t.all))
	for _, p := range t.all {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Progress) int { return strings.Compare(a.HostedCluster.String(), b.HostedCluster.String()) })
	return out
}

// Summary counts hosted clusters per phase and returns the active one (the
// one Migrating or RollingBack), for a one-line condition message.
func (t *Tracker) Summary() (counts map[Phase]int, active *Progress) {
	t.mu.Lock()
	defer t.mu.Unlock()
	counts = map[Phase]int{}
	for _, p := range t.all {
		counts[p.Phase]++
		if p.Phase == PhaseMigrating || p.Phase == PhaseRollingBack {
			cp := p
			active = &cp
		}
	}
	return counts, active
}
