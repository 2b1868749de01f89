// Package operatorlimits is the agent feature that tells the hub which
// operators installed in each hosted cluster limit its OpenShift minor
// upgrades, and whether its catalogs serve: for every HostedCluster the hub
// delivered whose admin kubeconfig exists, the agent lists the ClusterServiceVersions in the hosted cluster
// (its guest API server, as the admin), applies OLM's rule (pkg/olm.Limits:
// olm.maxOpenShiftVersion, copies ignored, invalid values block) and writes
// the result onto the HostedCluster as olm.AnnotationOperatorLimits, which
// the hub reads back through the ManifestWork's status feedback and gates
// minor upgrades with (pkg/olm/hub.Decide). In the same pass it lists the
// CatalogSources in the hosted cluster's openshift-marketplace and writes
// their connection states (OLM's catalog-operator's
// status.connectionState.lastObservedState) as olm.AnnotationCatalogHealth,
// which the hub turns into the CatalogsReady condition
// (pkg/olm/hub.CatalogsCondition).
//
// A hosted cluster without OLM's CRDs has no operators and no catalogs: it
// reports an empty list and no catalogs. One the agent cannot reach keeps its last report (and the hub
// decides on it) until it can again.
//
// What it reads on the management cluster: the delivered HostedClusters
// (one label-selected list per pass, uncached) and their kubeconfig Secrets
// by name, with the grant the kubeconfig export uses
// (addon.AgentHostingNamespaceRole). What it writes: the annotations
// olm.AnnotationOperatorLimits and olm.AnnotationCatalogHealth, by merge patch. In the hosted cluster
// it only reads (CSVs, CatalogSources), as its admin.
package operatorlimits

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

// ResyncPeriod is how often the hosted clusters' operators are read: a CSV
// installed or removed in a hosted cluster reaches the hub within it (plus
// the work agent's feedback interval).
var ResyncPeriod = 15 * time.Second

// guestTimeout bounds each request to a hosted cluster's API server, so one
// unreachable guest does not hold up the others for long.
const guestTimeout = 10 * time.Second

var (
	hostedClusterGVR = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}
	key              = reconcile.Request{NamespacedName: types.NamespacedName{Name: "olm-operator-limits"}}
	guestScheme      = runtime.NewScheme()
)

func init() {
	if err := operatorsv1alpha1.AddToScheme(guestScheme); err != nil {
		panic(err)
	}
}

// Feature is the operator-limits report as an agent feature.
func Feature() agent.Feature {
	return agent.Feature{Name: "olm-operator-limits", Setup: setup}
}

// GuestRetry is how long a hosted cluster whose guest API server could not
// be read is left alone (its last report stands), so unreachable guests
// (a control plane still coming up, a network problem) cost one attempt per
// period instead of one per pass.
var GuestRetry = time.Minute

type reconciler struct {
	managed dynamic.Interface
	secrets client.Reader // uncached: kubeconfig Secrets by name
	binder  *kubeutil.Binder
	// failed: when reading a hosted cluster (by UID) last failed.
	failed map[types.UID]time.Time
}

func setup(mgr ctrl.Manager, env *agent.Env) error {
	dyn, err := dynamic.NewForConfig(env.Managed)
	if err != nil {
		return err
	}
	r := &reconciler{managed: dyn, secrets: mgr.GetAPIReader(), failed: map[types.UID]time.Time{},
		binder: &kubeutil.Binder{Client: mgr.GetClient(), ClusterRole: addon.AgentHostingNamespaceRole,
			Probe: authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets"}}}
	trigger := agent.NewSingleRequest(key)
	trigger.Requeue()
	return trigger.Controller(mgr, "olm-operator-limits").Complete(r)
}

// Reconcile reports the operator limits of every delivered hosted cluster.
func (r *reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	selector := labels.NewSelector()
	for _, l := range []string{hosting.LabelHCDNamespace, hosting.LabelHCDName} {
		req, _ := labels.NewRequirement(l, selection.Exists, nil)
		selector = selector.Add(*req)
	}
	list, err := r.managed.Resource(hostedClusterGVR).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return reconcile.Result{RequeueAfter: ResyncPeriod}, nil // no HyperShift CRDs yet
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	var errs []error
	now := time.Now()
	seen := make(map[types.UID]bool, len(list.Items))
	for i := range list.Items {
		hc := &list.Items[i]
		seen[hc.GetUID()] = true
		if at, ok := r.failed[hc.GetUID()]; ok && now.Sub(at) < GuestRetry {
			continue
		}
		if err := r.report(ctx, hc); err != nil {
			r.failed[hc.GetUID()] = now
			errs = append(errs, err)
			continue
		}
		delete(r.failed, hc.GetUID())
	}
	for uid := range r.failed {
		if !seen[uid] {
			delete(r.failed, uid)
		}
	}
	if err := errors.Join(errs...); err != nil {
		// Logged; the others were reported, and the next pass tries again.
		ctrl.LoggerFrom(ctx).Error(err, "reading hosted clusters' operators")
	}
	return reconcile.Result{RequeueAfter: ResyncPeriod}, nil
}

// report writes hc's operator limits and catalog health onto it when they
// changed. A failure to read one does not hold up the other's report.
func (r *reconciler) report(ctx context.Context, hc *unstructured.Unstructured) error {
	secretName, _, _ := unstructured.NestedString(hc.Object, "status", "kubeconfig", "name")
	if secretName == "" || hc.GetDeletionTimestamp() != nil {
		return nil
	}
	guest, err := r.guestClient(ctx, hc.GetNamespace(), secretName)
	if err != nil || guest == nil {
		return err
	}
	want := map[string]string{}
	var errs []error
	if limits, err := Read(ctx, guest); err != nil {
		errs = append(errs, err)
	} else if value, err := Encode(limits); err != nil {
		errs = append(errs, err)
	} else {
		want[olm.AnnotationOperatorLimits] = value
	}
	if catalogs, err := ReadCatalogs(ctx, guest); err != nil {
		errs = append(errs, err)
	} else {
		want[olm.AnnotationCatalogHealth] = catalogs.Encode()
	}
	changed := map[string]string{}
	for k, v := range want {
		if current, ok := hc.GetAnnotations()[k]; !ok || current != v {
			changed[k] = v
		}
	}
	if len(changed) > 0 {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": changed}})
		_, err = r.managed.Resource(hostedClusterGVR).Namespace(hc.GetNamespace()).Patch(ctx, hc.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("reporting on HostedCluster: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("HostedCluster %s/%s: %w", hc.GetNamespace(), hc.GetName(), err)
	}
	return nil
}

// FieldManager owns the report annotation on HostedClusters.
const FieldManager = "hcp-fleet-olm-operator-limits"

// guestClient is a client of the hosted cluster as its admin, or nil while
// its kubeconfig Secret is not there.
func (r *reconciler) guestClient(ctx context.Context, namespace, secretName string) (client.Client, error) {
	if err := r.binder.Ensure(ctx, namespace); err != nil {
		return nil, err
	}
	secret := &corev1.Secret{}
	err := r.binder.Checked(namespace, r.secrets.Get(ctx, types.NamespacedName{Namespace: namespace, Name: secretName}, secret))
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig Secret %s/%s: %w", namespace, secretName, err)
	}
	data := secret.Data[hosting.KubeconfigKey]
	if len(data) == 0 {
		return nil, nil
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig Secret %s/%s: %w", namespace, secretName, err)
	}
	cfg.Timeout = guestTimeout
	return client.New(cfg, client.Options{Scheme: guestScheme})
}

// Read lists the hosted cluster's CSVs and returns their limits; none when
// OLM's CRDs are not installed.
func Read(ctx context.Context, guest client.Reader) ([]olm.Limit, error) {
	var csvs operatorsv1alpha1.ClusterServiceVersionList
	if err := guest.List(ctx, &csvs); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("listing ClusterServiceVersions: %w", err)
	}
	return olm.Limits(csvs.Items), nil
}

// Encode is the report's annotation value: a JSON list (never null), at
// most olm.MaxReportedLimits entries, blocking ones first so that what is
// cut never hides a limit.
func Encode(limits []olm.Limit) (string, error) {
	if limits == nil {
		limits = []olm.Limit{}
	}
	if len(limits) > olm.MaxReportedLimits {
		// Invalid limits and the lowest maxima first: they block the
		// nearest minors.
		sorted := slices.Clone(limits)
		slices.SortStableFunc(sorted, func(a, b olm.Limit) int {
			switch {
			case a.Invalid != "" || b.Invalid != "":
				return boolRank(a.Invalid == "") - boolRank(b.Invalid == "")
			case minorBelow(a.MaxOpenShiftVersion, b.MaxOpenShiftVersion):
				return -1
			case minorBelow(b.MaxOpenShiftVersion, a.MaxOpenShiftVersion):
				return 1
			}
			return 0
		})
		limits = sorted[:olm.MaxReportedLimits]
	}
	b, err := json.Marshal(limits)
	return string(b), err
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// minorBelow reports whether minor a is below minor b.
func minorBelow(a, b string) bool {
	return olm.Limit{MaxOpenShiftVersion: a}.Blocks(b) && a != b
}
