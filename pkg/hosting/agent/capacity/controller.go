package capacity

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clusterclient "open-cluster-management.io/api/client/cluster/clientset/versioned"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/agent/operator"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

var (
	hostedClustersGauge = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "hcpfleet_agent_hosted_clusters", Help: "HostedClusters on this management cluster."})
	managedHostedClustersGauge = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "hcpfleet_agent_managed_hosted_clusters", Help: "HostedClusters on this management cluster that hcp-fleet delivered."})
	capacityGauge = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "hcpfleet_agent_hosted_cluster_capacity", Help: "HostedClusters this management cluster takes: maxHostedClusters from the HostingConfig, or fewer when its Nodes' allocatable CPU and memory take fewer hosted control planes."})
	resourceSlotsGauge = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "hcpfleet_agent_hosted_cluster_resource_slots", Help: "Hosted control planes the allocatable CPU and memory of the schedulable Nodes take at the size of one (the observed average, or the HostingConfig's perHostedControlPlane); -1 when no size is known."})
	freeSlotsGauge = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "hcpfleet_agent_hosted_cluster_free_slots", Help: "HostedClusters that still fit on this management cluster."})
	supportedVersionsGauge = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "hcpfleet_agent_supported_release_versions", Help: "OpenShift minor versions the installed HyperShift operator supports."})
)

func init() {
	metrics.Registry.MustRegister(hostedClustersGauge, managedHostedClustersGauge, capacityGauge, resourceSlotsGauge, freeSlotsGauge, supportedVersionsGauge)
	utilruntime.Must(clusterv1alpha1.Install(agent.Scheme))
}

var hostedClusterGVK = hosting.HostedClusterGVK

// resyncPeriod bounds how stale a report can get if an event is missed (and
// how soon counting starts once the operator installed the CRD).
const resyncPeriod = 10 * time.Second

// observePeriod is how often the requests of the running hosted control
// planes are listed again: with 80 of them that is thousands of pods, read
// uncached (no pod informer in the agent), and their average moves slowly.
const observePeriod = 5 * time.Minute

// Feature is the hosting report as an agent feature.
func Feature() agent.Feature {
	return agent.Feature{Name: "hosting-report", ConfigureCache: configureCache, Setup: setup, Cleanup: Cleanup}
}

type reconciler struct {
	client client.Client // HostedCluster metadata from the cache
	reader client.Reader // uncached: the supported-versions ConfigMap, claims
	mapper meta.RESTMapper
	env    *agent.Env
	scores clusterclient.Interface

	// observed is the last average per hosted control plane (nil while
	// none runs), listed at observedAt.
	observed       *v1alpha1.ResourceBaseline
	observedPlanes int
	observedAt     time.Time
}

var reportKey = reconcile.Request{NamespacedName: types.NamespacedName{Name: "hosting-report"}}

func setup(mgr ctrl.Manager, env *agent.Env) error {
	scores, err := clusterclient.NewForConfig(env.Hub)
	if err != nil {
		return err
	}
	r := &reconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), mapper: mgr.GetRESTMapper(), env: env, scores: scores}
	report := agent.NewSingleRequest(reportKey)
	env.HostingConfig.Subscribe(report.Events())
	return report.Controller(mgr, "hosting-report").
		// HostedClusters coming and going change the counts; the informer
		// starts once the operator feature installed the CRD.
		WatchesRawSource(agent.WatchMetadataWhenServed(mgr, hostedClusterGVK, func(client.Object) []reconcile.Request {
			return []reconcile.Request{reportKey}
		})).
		// Nodes coming, going, cordoned or resized change the resource
		// part of the capacity; their frequent heartbeats do not.
		Watches(&corev1.Node{}, report.Handler(), builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool {
				return nodeCapacityChanged(e.ObjectOld.(*corev1.Node), e.ObjectNew.(*corev1.Node))
			},
		})).
		Complete(r)
}

// Reconcile computes the report and publishes it where it changed.
func (r *reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	if r.env.AddonDeleting(ctx) {
		return reconcile.Result{}, nil // the cleanup removes the report
	}
	spec := &v1alpha1.HostingConfigSpec{}
	if hc := r.env.HostingConfig.Current(); hc != nil {
		if err := json.Unmarshal(hc.Spec, spec); err != nil {
			return reconcile.Result{}, nil //nolint:nilerr // the operator feature reports an unreadable HostingConfig
		}
	}
	var report Report
	report.MaxHostedClusters, report.AboveThreshold = spec.Limits()
	report.Platforms = Platforms(spec.HostsAWS())

	var err error
	report.Resources, err = r.resources(ctx, spec)
	if err != nil {
		return reconcile.Result{}, err
	}
	report.HostedClusters, report.ManagedHostedClusters, err = r.countHostedClusters(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	report.SupportedVersions, err = r.supportedVersions(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}

	if err := r.applyClaims(ctx, report.Claims()); err != nil {
		return reconcile.Result{}, err
	}
	if err := r.applyScore(ctx, report.Scores()); err != nil {
		return reconcile.Result{}, err
	}
	hostedClustersGauge.Set(float64(report.HostedClusters))
	managedHostedClustersGauge.Set(float64(report.ManagedHostedClusters))
	capacityGauge.Set(float64(report.Capacity()))
	if slots, ok := report.Resources.Slots(); ok {
		resourceSlotsGauge.Set(float64(slots))
	} else {
		resourceSlotsGauge.Set(-1)
	}
	freeSlotsGauge.Set(float64(report.FreeSlots()))
	supportedVersionsGauge.Set(float64(len(report.SupportedVersions)))
	return reconcile.Result{RequeueAfter: resyncPeriod}, nil
}

// countHostedClusters counts all HostedClusters and those hcp-fleet
// delivered, from the manager's metadata-only cache (no API list per event;
// labels are metadata, so the cache has them); none before the HyperShift
// CRDs exist. The controller watches the same informer, so counts follow
// HostedClusters as they come and go.
func (r *reconciler) countHostedClusters(ctx context.Context) (total, managed int32, err error) {
	if served, err := kubeutil.Served(r.mapper, hostedClusterGVK); !served {
		return 0, 0, err // nil while the operator feature has not installed the CRDs
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(hostedClusterGVK.GroupVersion().WithKind("HostedClusterList"))
	if err := r.client.List(ctx, list); err != nil {
		return 0, 0, err
	}
	for i := range list.Items {
		if IsManaged(list.Items[i].Labels) {
			managed++
		}
	}
	return int32(len(list.Items)), managed, nil
}

// resources reads what the Nodes offer (from the cache) and the size of one
// hosted control plane: the observed average of the running ones (listed
// every observePeriod), or spec's perHostedControlPlane.
func (r *reconciler) resources(ctx context.Context, spec *v1alpha1.HostingConfigSpec) (ResourceBasis, error) {
	var nodes corev1.NodeList
	if err := r.client.List(ctx, &nodes); err != nil {
		return ResourceBasis{}, fmt.Errorf("listing Nodes: %w", err)
	}
	if r.observedAt.IsZero() || time.Since(r.observedAt) >= observePeriod {
		var pods corev1.PodList
		if err := r.reader.List(ctx, &pods, client.HasLabels{ControlPlaneLabel}); err != nil {
			return ResourceBasis{}, fmt.Errorf("listing hosted control-plane pods: %w", err)
		}
		r.observed, r.observedPlanes = ObservedPerControlPlane(pods.Items)
		r.observedAt = time.Now()
	}
	var configured *v1alpha1.ResourceBaseline
	if spec.Capacity != nil {
		configured = spec.Capacity.PerHostedControlPlane
	}
	return NewResourceBasis(NodesAllocatable(nodes.Items), configured, r.observed, r.observedPlanes), nil
}

// nodeCapacityChanged tells whether a Node update changes what
// NodesAllocatable counts.
func nodeCapacityChanged(old, cur *corev1.Node) bool {
	return schedulable(old) != schedulable(cur) ||
		!old.Status.Allocatable.Cpu().Equal(*cur.Status.Allocatable.Cpu()) ||
		!old.Status.Allocatable.Memory().Equal(*cur.Status.Allocatable.Memory())
}

// configureCache keeps only what the report reads of a Node: a Node's
// images and managed fields are most of its size.
func configureCache(opts *cache.Options) {
	if opts.ByObject == nil {
		opts.ByObject = map[client.Object]cache.ByObject{}
	}
	opts.ByObject[&corev1.Node{}] = cache.ByObject{Transform: func(o any) (any, error) {
		if n, ok := o.(*corev1.Node); ok {
			n.ManagedFields = nil
			n.Status.Images = nil
			n.Status.VolumesAttached = nil
			n.Status.VolumesInUse = nil
		}
		return o, nil
	}}
}

// supportedVersions reads the operator's supported-versions ConfigMap.
func (r *reconciler) supportedVersions(ctx context.Context) ([]string, error) {
	cm := &corev1.ConfigMap{}
	err := r.reader.Get(ctx, types.NamespacedName{Namespace: operator.Namespace, Name: operator.SupportedVersionsConfigMap}, cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var doc struct {
		Versions []string `json:"versions"`
	}
	if err := json.Unmarshal([]byte(cm.Data["supported-versions"]), &doc); err != nil {
		return nil, nil //nolint:nilerr // an unreadable list is reported as unknown
	}
	return doc.Versions, nil
}

// applyClaims writes the claims whose value or label differ, with
// server-side apply: the agent's RBAC names the claims it may write, and an
// apply that creates is authorized as "create" of the named claim (a plain
// create is not).
func (r *reconciler) applyClaims(ctx context.Context, claims map[string]string) error {
	for name, value := range claims {
		live := &clusterv1alpha1.ClusterClaim{}
		err := r.reader.Get(ctx, types.NamespacedName{Name: name}, live)
		switch {
		case err == nil && live.Spec.Value == value && live.Labels[operator.ManagedByLabel] == operator.ManagedByValue:
			continue
		case err != nil && !apierrors.IsNotFound(err):
			return err
		}
		claim := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": clusterv1alpha1.GroupVersion.String(), "kind": "ClusterClaim",
			"metadata": map[string]any{"name": name, "labels": map[string]any{operator.ManagedByLabel: operator.ManagedByValue}},
			"spec":     map[string]any{"value": value},
		}}
		if err := r.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(claim), client.FieldOwner(operator.FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying ClusterClaim %s: %w", name, err)
		}
	}
	return nil
}

func (r *reconciler) applyScore(ctx context.Context, items []clusterv1alpha1.AddOnPlacementScoreItem) error {
	ns := r.env.Options.ClusterName
	scores := r.scores.ClusterV1alpha1().AddOnPlacementScores(ns)
	live, err := scores.Get(ctx, ScoreName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		live, err = scores.Create(ctx, &clusterv1alpha1.AddOnPlacementScore{ObjectMeta: metav1.ObjectMeta{Name: ScoreName, Namespace: ns}}, metav1.CreateOptions{})
	}
	if err != nil {
		return fmt.Errorf("AddOnPlacementScore %s/%s: %w", ns, ScoreName, err)
	}
	if scoresEqual(live.Status.Scores, items) {
		return nil
	}
	live.Status.Scores = items
	live.Status.ValidUntil = &metav1.Time{Time: time.Now().Add(10 * time.Minute)}
	_, err = scores.UpdateStatus(ctx, live, metav1.UpdateOptions{})
	return err
}

func scoresEqual(a, b []clusterv1alpha1.AddOnPlacementScoreItem) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Cleanup removes the claims and the score.
func Cleanup(ctx context.Context, env *agent.Env) error {
	c, err := client.New(env.Managed, client.Options{Scheme: agent.Scheme})
	if err != nil {
		return err
	}
	claims := &clusterv1alpha1.ClusterClaimList{}
	if err := c.List(ctx, claims, client.MatchingLabels{operator.ManagedByLabel: operator.ManagedByValue}); err != nil && !meta.IsNoMatchError(err) {
		return fmt.Errorf("listing ClusterClaims: %w", err)
	}
	for i := range claims.Items {
		if err := c.Delete(ctx, &claims.Items[i]); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting ClusterClaim %s: %w", claims.Items[i].Name, err)
		}
	}
	scores, err := clusterclient.NewForConfig(env.Hub)
	if err != nil {
		return err
	}
	if err := scores.ClusterV1alpha1().AddOnPlacementScores(env.Options.ClusterName).Delete(ctx, ScoreName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting AddOnPlacementScore: %w", err)
	}
	return nil
}
