package feature

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/crds"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/migration"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/proxy"
)

// ConditionMigration is the ManagedClusterAddOn condition of the migration
// of legacy hosted clusters to the private CAPI types.
const ConditionMigration = addon.ConditionCAPIMigration

// hostedClusterCRD is the HyperShift CRD the migration controller watches;
// it runs only once the CRD is there.
const hostedClusterCRD = "hostedclusters.hypershift.openshift.io"

// agentContainer is the agent's container in its Deployment
// (manifests/agent/04-deployment.yaml), whose Deployment has the agent's
// name.
const agentContainer = "agent"

// migrationRunner runs the migration controller (pkg/capi/migration) in a
// manager of its own while the resolved CAPI mode is Private, and reports its
// progress as the CAPIMigration condition. It is a Runnable of the agent's
// manager, so the migration runs only on the leader; the controller has one
// worker, so one hosted cluster migrates at a time.
type migrationRunner struct {
	subManager[migrationRun]
	env      *agent.Env
	direct   client.Reader // uncached: the agent's Deployment, HostedCluster metadata
	reporter *agent.Reporter
	timing   migrationTiming

	kick chan struct{} // a report is due (capacity 1: requests coalesce)

	state migrationState // why no migration runs, when none does; guarded by mu
}

// migrationTiming shortens the controller's waits in tests (zero: its
// defaults).
type migrationTiming struct {
	PollInterval, ScaleDownTimeout, HealthTimeout time.Duration
}

// migrationState is why the migration controller is not running, for the
// condition.
type migrationState struct {
	reason, message string
}

// migrationRun is what one start of the migration controller runs.
type migrationRun struct {
	sidecar migration.ProxySidecar
	tracker *migration.Tracker
}

func newMigrationRunner(env *agent.Env, direct client.Reader, timing migrationTiming) *migrationRunner {
	m := &migrationRunner{env: env, direct: direct, reporter: env.Reporter("capi-migration"), timing: timing, kick: make(chan struct{}, 1)}
	m.subManager = newSubManager[migrationRun]("the CAPI migration controller stopped", "the migration controller's manager ended", m.requestReport)
	return m
}

// Start records the agent's context, reports whenever asked to, and stops
// the controller when the agent stops.
func (m *migrationRunner) Start(ctx context.Context) error {
	m.begin(ctx)
	log := ctrl.Log.WithName("capi-migration").WithValues("cluster", m.env.Options.ClusterName)
	for {
		select {
		case <-ctx.Done():
			m.stop()
			return nil
		case <-m.kick:
			if err := m.reporter.Set(ctx, m.condition()); err != nil && ctx.Err() == nil {
				log.Error(err, "reporting the CAPI migration")
				// Try again later; a newer kick may come first.
				time.AfterFunc(5*time.Second, m.requestReport)
			}
		}
	}
}

func (m *migrationRunner) requestReport() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// idle stops the controller and records why it does not run.
func (m *migrationRunner) idle(reason, message string) {
	m.stop()
	m.mu.Lock()
	m.state = migrationState{reason: reason, message: message}
	m.mu.Unlock()
	m.requestReport()
}

// ensure runs the controller when the resolved mode is Private (and the
// HostedCluster CRD exists), stops it otherwise, and returns when to look
// again. The condition follows asynchronously.
func (m *migrationRunner) ensure(ctx context.Context, d crds.Decision, live map[string]metav1.Object) time.Duration {
	if !m.ready(ctx) {
		return time.Second
	}
	if d.Mode != crds.ModePrivate {
		m.idle("NoneNeeded", fmt.Sprintf("the CAPI mode is %s: hosted clusters keep the standard CAPI types, nothing to migrate", d.Mode))
		return 0
	}
	if _, ok := live[hostedClusterCRD]; !ok {
		// The CRD watch brings us back when HyperShift's CRDs appear.
		m.idle("NoneNeeded", "no HostedCluster CRD on this cluster yet: no hosted clusters to migrate")
		return 0
	}
	sidecar, err := m.proxySidecar(ctx)
	if err != nil {
		m.idle("AgentImageUnknown", fmt.Sprintf("cannot migrate hosted clusters to the private CAPI types: the CAPI API proxy sidecar runs the agent's image, which is unknown: %v", err))
		return 30 * time.Second
	}

	m.mu.Lock()
	cur := m.cur
	retry := cur != nil && cur.exited && time.Since(cur.exitedAt) >= restartBackoff
	m.mu.Unlock()
	if cur != nil && (retry || !sidecarEqual(cur.info.sidecar, sidecar)) {
		m.stop()
		cur = nil
	}
	if cur == nil {
		cur = m.start(ctx, sidecar)
	}
	defer m.requestReport()
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur.exited {
		// Reported as ControllerFailed until the retry.
		return max(restartBackoff-time.Since(cur.exitedAt), time.Millisecond)
	}
	return 0
}

// proxySidecar is the sidecar the migration adds to CAPI workloads: the
// agent's own image and binary, running the proxy subcommand. Both come from
// the agent's Deployment (the hub renders HostingConfig spec.agentImage or
// its default into it).
func (m *migrationRunner) proxySidecar(ctx context.Context) (migration.ProxySidecar, error) {
	d := &appsv1.Deployment{}
	key := types.NamespacedName{Namespace: m.env.Options.AddonNamespace, Name: addon.AgentName}
	if err := m.direct.Get(ctx, key, d); err != nil {
		return migration.ProxySidecar{}, fmt.Errorf("reading the agent's Deployment %s: %w", key, err)
	}
	return SidecarFrom(d)
}

// SidecarFrom is the proxy sidecar for the agent Deployment d: the image and
// command of its agent container, with the proxy subcommand as arguments
// (the migration appends --listen).
func SidecarFrom(d *appsv1.Deployment) (migration.ProxySidecar, error) {
	cs := d.Spec.Template.Spec.Containers
	i := slices.IndexFunc(cs, func(c corev1.Container) bool { return c.Name == agentContainer })
	if i < 0 && len(cs) == 1 {
		i = 0
	}
	if i < 0 {
		return migration.ProxySidecar{}, fmt.Errorf("the Deployment %s/%s has no container %q", d.Namespace, d.Name, agentContainer)
	}
	if cs[i].Image == "" {
		return migration.ProxySidecar{}, fmt.Errorf("container %s of Deployment %s/%s has no image", cs[i].Name, d.Namespace, d.Name)
	}
	return migration.ProxySidecar{Image: cs[i].Image, Command: slices.Clone(cs[i].Command), Args: []string{proxy.SidecarCommand}}, nil
}

func sidecarEqual(a, b migration.ProxySidecar) bool {
	return a.Image == b.Image && slices.Equal(a.Command, b.Command) && slices.Equal(a.Args, b.Args) && a.Port == b.Port && a.ContainerName == b.ContainerName
}

// start runs the controller in a new manager on the management cluster's
// apiserver (never through the proxy: the migration sees both groups). A
// run that cannot start is returned as exited with the error.
func (m *migrationRunner) start(ctx context.Context, sidecar migration.ProxySidecar) *subRun[migrationRun] {
	log := ctrl.Log.WithName("capi-migration").WithValues("cluster", m.env.Options.ClusterName, "image", sidecar.Image)
	tracker := &migration.Tracker{}
	return m.launch(migrationRun{sidecar: sidecar, tracker: tracker}, log, func(context.Context, *subRun[migrationRun]) (ctrl.Manager, func(), error) {
		// The controller reports only what it reconciles; start from what
		// the annotations say, so that a restart reports what it reported
		// before.
		if err := seed(ctx, m.direct, tracker); err != nil {
			return nil, nil, fmt.Errorf("listing HostedClusters: %w", err)
		}
		mgr, err := newRunManager(m.env.Managed, log)
		if err == nil {
			err = migration.Setup(mgr, migration.Options{
				Proxy:            sidecar,
				PollInterval:     m.timing.PollInterval,
				ScaleDownTimeout: m.timing.ScaleDownTimeout,
				HealthTimeout:    m.timing.HealthTimeout,
				OnProgress: func(p migration.Progress) {
					tracker.Record(p)
					m.requestReport()
				},
				OnForget: func(hc types.NamespacedName) {
					tracker.Forget(hc)
					m.requestReport()
				},
			})
		}
		if err != nil {
			return nil, nil, err
		}
		log.Info("running the CAPI migration controller")
		return mgr, nil, nil
	})
}

// seed records every HostedCluster's standing from its annotations.
func seed(ctx context.Context, c client.Reader, t *migration.Tracker) error {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(migration.HostedClusterGVK.GroupVersion().WithKind("HostedClusterList"))
	if err := c.List(ctx, list); err != nil {
		return err
	}
	now := time.Now()
	for i := range list.Items {
		hc := &list.Items[i]
		p := migration.Progress{HostedCluster: client.ObjectKeyFromObject(hc), Since: now}
		switch migration.Classify(hc.Annotations, hc.DeletionTimestamp != nil) {
		case migration.Migrated:
			p.Phase = migration.PhaseMigrated
		case migration.Failed:
			p.Phase, p.Reason = migration.PhaseFailed, hc.Annotations[migration.AnnotationMigrationFailed]
		case migration.Eligible:
			p.Phase = migration.PhasePending
		case migration.InProgress:
			p.Phase = migration.PhaseMigrating
		default:
			continue
		}
		t.Record(p)
	}
	return nil
}

// condition is the CAPIMigration condition now.
func (m *migrationRunner) condition() metav1.Condition {
	m.mu.Lock()
	cur, st := m.cur, m.state
	var runErr error
	if cur != nil && cur.exited {
		runErr = cur.err
	}
	m.mu.Unlock()
	switch {
	case cur == nil:
		if st.reason == "" {
			st = migrationState{reason: "NoneNeeded", message: "waiting for the CAPI mode to be resolved"}
		}
		return migrationCondition(metav1.ConditionFalse, st.reason, st.message)
	case runErr != nil:
		return migrationCondition(metav1.ConditionFalse, "ControllerFailed", fmt.Sprintf("the CAPI migration controller stopped: %v; restarting", runErr))
	}
	return MigrationCondition(cur.info.tracker.All())
}

func migrationCondition(status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: ConditionMigration, Status: status, Reason: reason, Message: msg}
}

// MigrationCondition is the CAPIMigration condition for the migration
// progress of every hosted cluster: True while one migrates or rolls back
// (or waits for its turn), False once nothing is under way: reason
// MigrationFailed naming each failed hosted cluster and why, Complete when
// hosted clusters are on the private types, NoneNeeded when there is
// nothing to migrate. The message carries the counts. Pure.
func MigrationCondition(all []migration.Progress) metav1.Condition {
	counts := map[migration.Phase]int{}
	var active *migration.Progress
	var failed []string
	for i, p := range all {
		counts[p.Phase]++
		switch p.Phase {
		case migration.PhaseMigrating, migration.PhaseRollingBack:
			active = &all[i]
		case migration.PhaseFailed:
			failed = append(failed, fmt.Sprintf("%s (%s)", p.HostedCluster, p.Reason))
		}
	}
	tally := fmt.Sprintf("%d migrated, %d waiting, %d failed", counts[migration.PhaseMigrated], counts[migration.PhasePending], counts[migration.PhaseFailed])
	failures := ""
	if len(failed) > 0 {
		failures = fmt.Sprintf("; failed and rolled back (remove the HostedCluster annotation %s to retry): %s",
			migration.AnnotationMigrationFailed, strings.Join(failed, "; "))
	}
	switch {
	case active != nil && active.Phase == migration.PhaseRollingBack:
		return migrationCondition(metav1.ConditionTrue, "RollingBack", fmt.Sprintf("rolling back the CAPI migration of %s after %s failed: %s (%s)%s",
			active.HostedCluster, active.Step, active.Reason, tally, failures))
	case active != nil:
		msg := fmt.Sprintf("migrating %s to the private CAPI types", active.HostedCluster)
		if active.Step != "" {
			msg += fmt.Sprintf(", step %s (%d of %d)", active.Step, slices.Index(migration.Steps, active.Step)+1, len(migration.Steps))
		}
		if active.Reason != "" {
			msg += ": " + active.Reason
		}
		return migrationCondition(metav1.ConditionTrue, "Migrating", msg+" ("+tally+")"+failures)
	case counts[migration.PhasePending] > 0:
		return migrationCondition(metav1.ConditionTrue, "Migrating", fmt.Sprintf("%d legacy hosted cluster(s) waiting to migrate to the private CAPI types (%s)%s",
			counts[migration.PhasePending], tally, failures))
	case len(failed) > 0:
		return migrationCondition(metav1.ConditionFalse, "MigrationFailed", fmt.Sprintf("%d hosted cluster(s) failed to migrate to the private CAPI types (%s)%s",
			len(failed), tally, failures))
	case counts[migration.PhaseMigrated] > 0:
		return migrationCondition(metav1.ConditionFalse, "Complete", fmt.Sprintf("%d hosted cluster(s) on the private CAPI types, none left to migrate (%s)",
			counts[migration.PhaseMigrated], tally))
	default:
		return migrationCondition(metav1.ConditionFalse, "NoneNeeded", "no legacy hosted clusters (annotated "+migration.AnnotationScope+": "+migration.ScopeLegacy+") to migrate")
	}
}
