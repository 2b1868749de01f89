// Package feature runs the Cluster API parts of pkg/capi in the hcp-fleet
// agent, as HostingConfig says: it resolves the CAPI mode (Standard, Private
// or Auto, openshift/enhancements#1927), installs the CAPI CRDs of that mode, runs the
// OpenShift Agent CAPI providers (cluster-api-provider-openshift-assisted's architecture design) when HostingConfig enables them —
// through the private-types API proxy in Private mode — and reports both on
// the ManagedClusterAddOn (conditions CAPITypes and CAPIAgentProviders).
package feature

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/prometheus/client_golang/prometheus"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/assistedbootstrap"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/crds"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/proxy"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/agent/operator"
)

// Name names the feature in logs and as its condition owner.
const Name = "capi"

// Condition types this feature reports on the ManagedClusterAddOn.
const (
	ConditionTypes     = addon.ConditionCAPITypes
	ConditionProviders = addon.ConditionCAPIAgentProviders
)

var crdWrites = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "hcpfleet_agent_capi_crd_writes_total",
	Help: "CAPI CRDs applied by the agent (0 per reconcile when nothing changed).",
})

// providersRunning is 1 while the agent providers' manager runs (it has
// started and not yet stopped), 0 otherwise.
var providersRunning = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "hcpfleet_agent_capi_providers_running",
	Help: "1 while the OpenShift Agent CAPI providers run on this management cluster.",
})

func init() {
	utilruntime.Must(apiextensionsv1.AddToScheme(agent.Scheme))
	metrics.Registry.MustRegister(crdWrites, providersRunning)
}

// Options adapt the feature; the zero value is what the agent runs.
type Options struct {
	// Bootstrap configures the bootstrap provider (default: Metal3).
	Bootstrap assistedbootstrap.Options
	// SyncTimeout bounds how long the providers' watches may take to sync
	// before the providers are reported as failed (default 1 minute).
	SyncTimeout time.Duration
	// Migration shortens the migration controller's waits (zero: its
	// defaults).
	Migration migrationTiming
}

// Feature is the CAPI feature of the agent.
func Feature(opts Options) agent.Feature {
	if opts.SyncTimeout == 0 {
		opts.SyncTimeout = time.Minute
	}
	return agent.Feature{
		Name:    Name,
		Setup:   func(mgr ctrl.Manager, env *agent.Env) error { return setup(mgr, env, opts) },
		Cleanup: Cleanup,
		// The sidecar the migration adds to CAPI workloads runs the agent's
		// image with this subcommand.
		Commands: []agent.Command{{
			Name:    proxy.SidecarCommand,
			Summary: "serve the CAPI API proxy (standard CAPI groups onto the private CRDs): the sidecar of migrated CAPI workloads",
			Main:    proxy.Main,
		}},
	}
}

// reconciler keeps the CAPI CRDs and the agent providers as the
// HostingConfig asks. It handles one request: the management cluster.
type reconciler struct {
	cache      client.Reader // CRD metadata only
	direct     client.Client // uncached: full CRDs are read one by one and never cached
	env        *agent.Env
	reporter   *agent.Reporter
	providers  *providerRunner
	migrations *migrationRunner
}

var clusterKey = reconcile.Request{NamespacedName: types.NamespacedName{Name: "capi"}}

func setup(mgr ctrl.Manager, env *agent.Env, opts Options) error {
	cluster := agent.NewSingleRequest(clusterKey)
	env.HostingConfig.Subscribe(cluster.Events())
	runner := newProviderRunner(env, opts, cluster.Requeue)
	if err := mgr.Add(runner); err != nil {
		return err
	}
	direct, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return err
	}
	migrations := newMigrationRunner(env, direct, opts.Migration)
	if err := mgr.Add(migrations); err != nil {
		return err
	}
	r := &reconciler{cache: mgr.GetClient(), direct: direct, env: env, reporter: env.Reporter(Name), providers: runner, migrations: migrations}
	// CRDs of the CAPI families and the providers' prerequisites: someone
	// installing standard CAPI CRDs changes what Auto resolves to, and
	// assisted-service appearing lets the providers start. Metadata only:
	// CRD objects are large.
	relevant := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return relevant(o.GetName())
	})
	return cluster.Controller(mgr, "capi").
		WatchesMetadata(&apiextensionsv1.CustomResourceDefinition{}, cluster.Handler(), builder.WithPredicates(relevant)).
		Complete(r)
}

// Reconcile resolves the mode, installs the CRDs, runs the providers and
// reports.
func (r *reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	hc := r.env.HostingConfig.Current()
	if hc == nil {
		return reconcile.Result{}, r.reporter.Set(ctx, metav1.Condition{Type: ConditionTypes, Status: metav1.ConditionFalse,
			Reason: "WaitingForHostingConfig", Message: "waiting for the hub to render this cluster's HostingConfig"})
	}
	spec := &v1alpha1.HostingConfigSpec{}
	if err := json.Unmarshal(hc.Spec, spec); err != nil {
		return reconcile.Result{}, r.reporter.Set(ctx, metav1.Condition{Type: ConditionTypes, Status: metav1.ConditionFalse,
			Reason: "InvalidHostingConfig", Message: fmt.Sprintf("HostingConfig %s cannot be read: %v", hc.Source, err)})
	}
	if r.env.AddonDeleting(ctx) {
		// The pre-delete cleanup is removing our CRDs: stop the providers
		// and install nothing, so as not to fight it.
		r.providers.stop()
		r.migrations.stop()
		return reconcile.Result{}, nil
	}
	settings := SettingsFrom(spec)

	// Next to a HyperShift operator someone else installed (and hcp-fleet
	// does not adopt), its CAPI CRDs are not ours to decide: install nothing.
	if foreign, err := r.foreignOperator(ctx, spec); err != nil || foreign != "" {
		if err != nil {
			return reconcile.Result{}, err
		}
		r.providers.stop()
		// Its hosted clusters are its own to migrate, too.
		r.migrations.idle("ForeignHyperShiftOperator", "hcp-fleet migrates no hosted clusters next to a HyperShift operator it does not manage: "+foreign)
		return reconcile.Result{}, r.reporter.Set(ctx, metav1.Condition{Type: ConditionTypes, Status: metav1.ConditionFalse,
			Reason: "ForeignHyperShiftOperator", Message: foreign})
	}

	live, err := r.liveCRDs(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	d, err := r.installCRDs(ctx, settings, live)
	if err != nil {
		_ = r.reporter.Set(ctx, metav1.Condition{Type: ConditionTypes, Status: metav1.ConditionFalse, Reason: "InstallFailed",
			Message: fmt.Sprintf("%s; installing the CRDs failed: %v", d.Reason, err)})
		return reconcile.Result{}, err
	}
	if err := r.reporter.Set(ctx, d.Condition(0)); err != nil {
		return reconcile.Result{}, err
	}
	// Private mode: legacy hosted clusters move to the private CRDs just
	// installed. The condition is reported as the migration progresses.
	migrationRequeue := r.migrations.ensure(ctx, d, live)

	if prereqs := providerPrerequisites(settings.Providers); len(prereqs) > 0 && len(missing(prereqs, live)) == 0 {
		// Just installed (by MCE, say): the providers' watches need them
		// served. If they do not get there, starting fails and says why.
		_ = crds.WaitEstablished(ctx, r.direct, prereqs, 30*time.Second)
	}
	cond, requeueAfter := r.providers.ensure(ctx, settings.Providers, d, live)
	if migrationRequeue > 0 && (requeueAfter == 0 || migrationRequeue < requeueAfter) {
		requeueAfter = migrationRequeue
	}
	return reconcile.Result{RequeueAfter: requeueAfter}, r.reporter.Set(ctx, cond)
}

// liveCRDs returns the metadata of the CRDs on the cluster that matter
// here, by name, from the cache.
func (r *reconciler) liveCRDs(ctx context.Context) (map[string]metav1.Object, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinitionList"))
	if err := r.cache.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing CRDs: %w", err)
	}
	out := map[string]metav1.Object{}
	for i := range list.Items {
		if n := list.Items[i].Name; relevant(n) {
			out[n] = &list.Items[i]
		}
	}
	return out, nil
}

// installCRDs decides the mode from the CAPI-family CRDs on the cluster and
// applies the CRDs of that mode that are missing or changed. Someone else's
// CRDs are never written (crds.Installer).
func (r *reconciler) installCRDs(ctx context.Context, s Settings, live map[string]metav1.Object) (crds.Decision, error) {
	var onCluster []apiextensionsv1.CustomResourceDefinition
	for name := range live {
		if !inFamily(name) {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := r.direct.Get(ctx, types.NamespacedName{Name: name}, crd); err != nil {
			if client.IgnoreNotFound(err) == nil {
				continue
			}
			return crds.Decision{}, fmt.Errorf("reading CRD %s: %w", name, err)
		}
		onCluster = append(onCluster, *crd)
	}
	opts := s.CRDOptions()
	d := crds.Decide(s.Mode, onCluster, opts.CoreVersion)
	if d.Conflict {
		// Standard requested and someone else owns the standard CRDs: we
		// use theirs as they are and install nothing over them.
		return d, nil
	}
	want, err := crds.Build(d.Mode, opts)
	if err != nil {
		return d, err
	}
	if want, err = withAppliedHash(want); err != nil {
		return d, err
	}
	changed := needsApply(want, live)
	if len(changed) == 0 {
		return d, nil
	}
	res, err := (&crds.Installer{Client: r.direct}).Install(ctx, changed)
	crdWrites.Add(float64(len(res.Applied)))
	if err != nil {
		return d, err
	}
	if len(res.Applied) > 0 {
		ctrl.LoggerFrom(ctx).Info("applied CAPI CRDs", "mode", d.Mode, "crds", res.Applied)
	}
	return d, crds.WaitEstablished(ctx, r.direct, res.Applied, time.Minute)
}

// foreignOperator describes the HyperShift operator Deployment when someone
// else installed it and the HostingConfig does not let hcp-fleet adopt it;
// "" otherwise.
func (r *reconciler) foreignOperator(ctx context.Context, spec *v1alpha1.HostingConfigSpec) (string, error) {
	if spec.Operator != nil && spec.Operator.AdoptExisting {
		return "", nil
	}
	d := &appsv1.Deployment{}
	err := r.direct.Get(ctx, types.NamespacedName{Namespace: operator.Namespace, Name: operator.DeploymentName}, d)
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if d.Labels[operator.ManagedByLabel] == operator.ManagedByValue {
		return "", nil
	}
	return fmt.Sprintf("a HyperShift operator not installed by hcp-fleet runs in namespace %s; its CAPI CRDs are left to it and hcp-fleet installs none", operator.Namespace), nil
}
