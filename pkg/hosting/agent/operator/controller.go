package operator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
	capicrds "github.com/hcp-fleet/hcp-fleet/pkg/capi/crds"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/groups"
)

// ManagedClusterAddOn condition types the operator lifecycle reports.
const (
	ConditionInstalled   = addon.ConditionHyperShiftOperatorInstalled
	ConditionProgressing = "HyperShiftOperatorProgressing"
	ConditionDegraded    = "HyperShiftOperatorDegraded"
)

var (
	applyWrites = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hcpfleet_agent_hypershift_operator_apply_writes_total",
		Help: "Objects of the HyperShift operator install written by the agent (0 per reconcile when nothing changed).",
	})
	operatorAvailable = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "hcpfleet_agent_hypershift_operator_available",
		Help: "1 when the HyperShift operator Deployment the agent installed is available.",
	})

	// reason is the HyperShiftOperatorInstalled condition's reason: a fixed
	// set (docs/troubleshooting.md).
	operatorState = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "hcpfleet_agent_hypershift_operator_state",
		Help: "1 for the reason of the HyperShiftOperatorInstalled condition the agent reports now (Installed, RollingOut, ForeignInstall, ...); one series at a time.",
	}, []string{"reason"})
)

func init() { metrics.Registry.MustRegister(applyWrites, operatorAvailable, operatorState) }

// Feature is the HyperShift operator lifecycle as an agent feature.
func Feature() agent.Feature {
	return agent.Feature{Name: "hypershift-operator", ConfigureCache: configureCache, Setup: setup, Cleanup: Cleanup}
}

// configureCache: the agent watches the operator's Deployment and RBAC, each
// by a metadata.name field selector, which the API server authorizes as
// list/watch of that name: the agent's RBAC on them names the ones it
// installs. (CRDs it may watch whole; the rest of the install is checked
// every driftResyncPeriod.)
func configureCache(opts *cache.Options) {
	if opts.ByObject == nil {
		opts.ByObject = map[client.Object]cache.ByObject{}
	}
	byName := func(name string) fields.Selector { return fields.OneTermEqualSelector("metadata.name", name) }
	opts.ByObject[&appsv1.Deployment{}] = cache.ByObject{Namespaces: map[string]cache.Config{
		Namespace: {FieldSelector: byName(DeploymentName)}}}
	opts.ByObject[&rbacv1.ClusterRole{}] = cache.ByObject{Field: byName(rbacName)}
	opts.ByObject[&rbacv1.ClusterRoleBinding{}] = cache.ByObject{Field: byName(rbacName)}
	opts.ByObject[&rbacv1.Role{}] = cache.ByObject{Namespaces: map[string]cache.Config{Namespace: {FieldSelector: byName(rbacName)}}}
	opts.ByObject[&rbacv1.RoleBinding{}] = cache.ByObject{Namespaces: map[string]cache.Config{Namespace: {FieldSelector: byName(rbacName)}}}
}

// rbacName names the operator's ClusterRole, Role and their bindings.
const rbacName = "hypershift-operator"

// driftResyncPeriod is how often the whole install is checked for drift
// the watches cannot see (ServiceAccount, Service, PriorityClasses, Secrets):
// one metadata read per object, and a dry-run apply only of objects whose
// resourceVersion moved.
const driftResyncPeriod = 5 * time.Minute

// Reconciler keeps the HyperShift operator installed as the HostingConfig
// says.
type Reconciler struct {
	client   client.Client
	reader   client.Reader // uncached: the install spans many kinds
	env      *agent.Env
	reporter *agent.Reporter
	// verified holds, per object of the install, the resourceVersion at
	// which it was last seen to hold exactly what the agent applies. An
	// object still at that version needs no check; any other version (or
	// none known, after a restart) is checked with a server-side dry-run
	// apply, and written only if the dry run would change it.
	verified map[string]string
}

// installKey is the one request the reconciler handles: the install.
var installKey = reconcile.Request{NamespacedName: types.NamespacedName{Namespace: Namespace, Name: DeploymentName}}

func setup(mgr ctrl.Manager, env *agent.Env) error {
	r := &Reconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), env: env, reporter: env.Reporter("hypershift-operator"), verified: map[string]string{}}
	install := agent.NewSingleRequest(installKey)
	env.HostingConfig.Subscribe(install.Events())
	toInstall := install.Handler()
	return install.Controller(mgr, "hypershift-operator").
		Watches(&appsv1.Deployment{}, toInstall, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == Namespace && o.GetName() == DeploymentName
		}))).
		// The private CAPI CRDs pkg/capi installs (or removes) decide
		// --private-capi-types.
		// So do the CRDs of the install, which are corrected when edited or
		// deleted.
		WatchesMetadata(&apiextensionsv1.CustomResourceDefinition{}, toInstall, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetName() == privateCAPIClusterCRD || installCRDs[o.GetName()]
		}))).
		// The operator's RBAC (the cache holds only these, by name).
		Watches(&rbacv1.ClusterRole{}, toInstall).
		Watches(&rbacv1.ClusterRoleBinding{}, toInstall).
		Watches(&rbacv1.Role{}, toInstall).
		Watches(&rbacv1.RoleBinding{}, toInstall).
		// The credentials the hub delivers into the agent's namespace.
		Watches(&corev1.Secret{}, toInstall, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			_, credentials := o.GetLabels()[addon.CredentialsLabel]
			return credentials && o.GetNamespace() == env.Options.AddonNamespace
		}))).
		Complete(r)
}

// Reconcile applies the install if it differs from what the HostingConfig
// asks for, and reports its state.
func (r *Reconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	hc := r.env.HostingConfig.Current()
	if hc == nil {
		return reconcile.Result{}, r.report(ctx, hc, metav1.ConditionFalse, "WaitingForHostingConfig",
			"waiting for the hub to render this cluster's HostingConfig", nil)
	}
	spec := &v1alpha1.HostingConfigSpec{}
	if err := json.Unmarshal(hc.Spec, spec); err != nil {
		return reconcile.Result{}, r.report(ctx, hc, metav1.ConditionFalse, "InvalidHostingConfig",
			fmt.Sprintf("HostingConfig %s cannot be read: %v", hc.Source, err), nil)
	}
	if r.env.AddonDeleting(ctx) {
		// The pre-delete cleanup is removing the install; re-applying it
		// would fight the cleanup.
		return reconcile.Result{}, nil
	}

	current := &appsv1.Deployment{}
	err := r.client.Get(ctx, installKey.NamespacedName, current)
	switch {
	case apierrors.IsNotFound(err):
		current = nil
	case err != nil:
		return reconcile.Result{}, err
	}
	if spec.Operator.External() {
		return reconcile.Result{}, r.reportExternal(ctx, hc, current)
	}
	adopt := spec.Operator != nil && spec.Operator.AdoptExisting
	if current != nil && current.Labels[ManagedByLabel] != ManagedByValue && !adopt {
		return reconcile.Result{}, r.report(ctx, hc, metav1.ConditionFalse, "ForeignInstall", fmt.Sprintf(
			"a HyperShift operator not installed by hcp-fleet runs in namespace %s (image %s); hcp-fleet leaves it alone. "+
				"Set spec.operator.adoptExisting in HostingConfig %s to let hcp-fleet take it over", Namespace, image(current), hc.Source), nil)
	}

	creds, hold, err := r.credentials(ctx, hc, spec)
	if err != nil {
		return reconcile.Result{}, err
	}
	if hold != nil {
		// Leave the install as it is: a partial one would start an operator
		// whose credentials are missing. A Secret event requeues.
		if current == nil || current.Labels[ManagedByLabel] != ManagedByValue {
			return reconcile.Result{}, r.report(ctx, hc, metav1.ConditionFalse, hold.Reason, hold.Message, nil, *hold)
		}
		return reconcile.Result{}, r.reportRollout(ctx, image(current), current, hc, *hold)
	}
	cluster, err := r.cluster(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	install, err := Render(spec, creds, cluster)
	if err != nil {
		return reconcile.Result{}, err
	}

	written, err := r.apply(ctx, install)
	if err != nil {
		_ = r.report(ctx, hc, metav1.ConditionFalse, "ApplyFailed", err.Error(), current)
		return reconcile.Result{}, err
	}
	if written > 0 || current == nil {
		current = &appsv1.Deployment{}
		if err := r.reader.Get(ctx, installKey.NamespacedName, current); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{RequeueAfter: driftResyncPeriod}, r.reportRollout(ctx, install.Image, current, hc)
}

// privateCAPIClusterCRD is the private form of the CAPI Cluster CRD: the
// one every private CAPI install has.
var privateCAPIClusterCRD = "clusters." + groups.Private

// cluster reads the management cluster state Render depends on: whether
// hcp-fleet's CAPI feature installed the private CAPI CRDs. A private CRD
// someone else installed does not count: hcp-fleet did not set up the API
// proxy and migration for it.
func (r *Reconciler) cluster(ctx context.Context) (Cluster, error) {
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	err := r.client.Get(ctx, types.NamespacedName{Name: privateCAPIClusterCRD}, crd)
	switch {
	case apierrors.IsNotFound(err):
		return Cluster{}, nil
	case err != nil:
		return Cluster{}, fmt.Errorf("reading CRD %s: %w", privateCAPIClusterCRD, err)
	}
	ours := crd.Labels[capicrds.ManagedByLabel] == capicrds.ManagedByValue && crd.DeletionTimestamp.IsZero()
	return Cluster{PrivateCAPITypes: ours}, nil
}

// credentials collects the credentials the spec references from the copies
// the hub delivers into the agent's namespace. A non-nil hold is the
// condition (Degraded or Progressing) that says why the install must wait:
// the hub could not resolve a reference (the admin must fix it on the hub),
// or a copy has not arrived yet.
func (r *Reconciler) credentials(ctx context.Context, hc *agent.HostingConfig, spec *v1alpha1.HostingConfigSpec) (Credentials, *metav1.Condition, error) {
	if len(hc.CredentialProblems) > 0 {
		return nil, &metav1.Condition{Type: ConditionDegraded, Status: metav1.ConditionTrue, Reason: "CredentialsUnavailable", Message: fmt.Sprintf(
			"the hub cannot deliver the credentials the HostingConfig references: %s. The HyperShift operator install is left as it is until this is fixed on the hub",
			strings.Join(hc.CredentialProblems, "; "))}, nil
	}
	hubNamespace, _, _ := strings.Cut(hc.Source, "/")
	creds := Credentials{}
	for _, ref := range addon.CredentialRefs(spec) {
		wait := func(why string) (Credentials, *metav1.Condition, error) {
			return nil, &metav1.Condition{Type: ConditionProgressing, Status: metav1.ConditionTrue, Reason: "WaitingForCredentials", Message: fmt.Sprintf(
				"waiting for the hub to deliver Secret %s/%s, the copy of %s of HostingConfig %s (Secret %s/%s): %s",
				r.env.Options.AddonNamespace, ref.Secret, ref.Field, hc.Source, hubNamespace, ref.Name, why)}, nil
		}
		copied := &corev1.Secret{}
		err := r.client.Get(ctx, types.NamespacedName{Namespace: r.env.Options.AddonNamespace, Name: ref.Secret}, copied)
		switch {
		case apierrors.IsNotFound(err):
			return wait("not there yet")
		case err != nil:
			return nil, nil, err
		}
		// The hub renders an empty copy (no source) where it has none.
		switch src, want := copied.Annotations[addon.CredentialsSourceAnnotation], ref.Source(hubNamespace); {
		case src == "":
			return wait("not there yet")
		case src != want:
			return wait(fmt.Sprintf("it still holds %s", src))
		}
		data, ok := copied.Data[addon.CredentialsKey]
		if !ok {
			return wait("it holds no credentials")
		}
		creds[ref.Purpose] = data
	}
	return creds, nil, nil
}

// apply writes the objects that differ from what the agent applies — a new
// applied hash, or drift: someone edited or deleted what the agent owns — and
// removes optional objects no longer desired. It returns how many objects it
// wrote; nothing when nothing changed.
func (r *Reconciler) apply(ctx context.Context, install *Install) (int, error) {
	written := 0
	desired := map[string]bool{}
	for _, obj := range install.Objects {
		key := ObjectKey(obj)
		desired[key] = true
		live := &metav1.PartialObjectMetadata{}
		live.SetGroupVersionKind(obj.GroupVersionKind())
		err := r.reader.Get(ctx, client.ObjectKeyFromObject(obj), live)
		if err != nil && !apierrors.IsNotFound(err) {
			return written, fmt.Errorf("reading %s: %w", key, err)
		}
		if err == nil && live.Annotations[AppliedHashAnnotation] == obj.GetAnnotations()[AppliedHashAnnotation] &&
			live.Labels[ManagedByLabel] == ManagedByValue {
			if r.verified[key] == live.ResourceVersion {
				continue
			}
			drifted, err := r.drifted(ctx, obj)
			if err != nil {
				return written, err
			}
			if !drifted {
				continue
			}
			ctrl.LoggerFrom(ctx).Info("correcting drift", "object", key)
		}
		applied := obj.DeepCopy()
		if err := r.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(applied),
			client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return written, fmt.Errorf("applying %s: %w", key, err)
		}
		r.verified[key] = applied.GetResourceVersion()
		written++
		applyWrites.Inc()
	}
	// Optional objects no longer desired: external-dns, and credentials the
	// HostingConfig no longer references.
	optional := []*metav1.PartialObjectMetadata{deploymentMeta("external-dns")}
	for _, name := range sortedValues(credentialSecrets) {
		optional = append(optional, secretMeta(name))
	}
	for _, obj := range optional {
		if desired[obj.Kind+" "+Namespace+"/"+obj.Name] {
			continue
		}
		err := r.reader.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if err == nil && obj.Labels[ManagedByLabel] == ManagedByValue {
			if err := r.client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
				return written, fmt.Errorf("deleting %s %s/%s: %w", obj.Kind, Namespace, obj.Name, err)
			}
			written++
			applyWrites.Inc()
		} else if client.IgnoreNotFound(err) != nil {
			return written, fmt.Errorf("reading %s %s/%s: %w", obj.Kind, Namespace, obj.Name, err)
		}
	}
	return written, nil
}

// drifted reports whether applying obj would change the live object: a
// server-side dry-run apply, compared with the live object without the
// bookkeeping an apply always touches. Fields other managers own are theirs
// and do not count; fields the agent owns that someone changed or removed do.
// When nothing would change, the live version is remembered as verified.
func (r *Reconciler) drifted(ctx context.Context, obj *unstructured.Unstructured) (bool, error) {
	key := ObjectKey(obj)
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(obj.GroupVersionKind())
	if err := r.reader.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("reading %s: %w", key, err)
	}
	dryRun := obj.DeepCopy()
	if err := r.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(dryRun),
		client.FieldOwner(FieldManager), client.ForceOwnership, client.DryRunAll); err != nil {
		return false, fmt.Errorf("checking %s for drift: %w", key, err)
	}
	if !sameContent(live, dryRun) {
		return true, nil
	}
	r.verified[key] = live.GetResourceVersion()
	return false, nil
}

// sameContent compares two versions of an object without what changes on
// every write (resourceVersion, generation, managedFields).
func sameContent(a, b *unstructured.Unstructured) bool {
	strip := func(u *unstructured.Unstructured) map[string]any {
		c := u.DeepCopy()
		unstructured.RemoveNestedField(c.Object, "metadata", "resourceVersion")
		unstructured.RemoveNestedField(c.Object, "metadata", "generation")
		unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
		return c.Object
	}
	return equality.Semantic.DeepEqual(strip(a), strip(b))
}

func deploymentMeta(name string) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: name}}
	m.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	return m
}

func secretMeta(name string) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: name}}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	return m
}

func sortedValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// reportRollout reports the rollout of the operator Deployment (of image);
// overrides replace the Progressing or Degraded condition it implies.
func (r *Reconciler) reportRollout(ctx context.Context, img string, d *appsv1.Deployment, hc *agent.HostingConfig, overrides ...metav1.Condition) error {
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	st := d.Status
	switch rolloutPhase(d, replicas) {
	case "RollingOut":
		operatorAvailable.Set(0)
		old := ""
		if st.Replicas > st.UpdatedReplicas {
			old = fmt.Sprintf(", %d old pending termination", st.Replicas-st.UpdatedReplicas)
		}
		return r.report(ctx, hc, metav1.ConditionFalse, "RollingOut", fmt.Sprintf("rolling out HyperShift operator %s (version %s): %d/%d replicas updated%s",
			img, version(img), st.UpdatedReplicas, replicas, old), d, overrides...)
	case "WaitingForAvailability":
		operatorAvailable.Set(0)
		return r.report(ctx, hc, metav1.ConditionFalse, "WaitingForAvailability", fmt.Sprintf("HyperShift operator %s (version %s): %d/%d replicas available%s",
			img, version(img), st.AvailableReplicas, replicas, deploymentProblem(d)), d, overrides...)
	}
	operatorAvailable.Set(1)
	return r.report(ctx, hc, metav1.ConditionTrue, "Installed", fmt.Sprintf("HyperShift operator %s (version %s) is installed and available in namespace %s%s (HostingConfig %s)",
		img, version(img), Namespace, capiTypes(d), hc.Source), d, overrides...)
}

// capiTypes says, for the Installed message, whether the operator runs with
// the private CAPI types.
func capiTypes(d *appsv1.Deployment) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		if slices.Contains(c.Args, PrivateCAPITypesFlag) {
			return ", with the private CAPI types (" + PrivateCAPITypesFlag + ")"
		}
	}
	return ""
}

// report sets the three operator conditions from one state; overrides
// replace the Progressing or Degraded condition the state implies.
//
// It also answers the HostingConfig ConfigMap's revision (agent.Env's
// ReportOperatorHealth), which OCM's rollout reads through the add-on
// ManifestWork: healthy when the operator installed from hc is available
// with nothing held back, or when another manager runs it (ForeignInstall,
// whose health is not the add-on's).
func (r *Reconciler) report(ctx context.Context, hc *agent.HostingConfig, installed metav1.ConditionStatus, reason, message string, d *appsv1.Deployment, overrides ...metav1.Condition) error {
	progressing := metav1.Condition{Type: ConditionProgressing, Status: metav1.ConditionFalse, Reason: "AsExpected", Message: "no rollout in progress"}
	degraded := metav1.Condition{Type: ConditionDegraded, Status: metav1.ConditionFalse, Reason: "AsExpected", Message: "the HyperShift operator is healthy"}
	switch reason {
	case "RollingOut", "WaitingForAvailability":
		progressing = metav1.Condition{Type: ConditionProgressing, Status: metav1.ConditionTrue, Reason: reason, Message: message}
		if d != nil && deploymentProblem(d) != "" {
			degraded = metav1.Condition{Type: ConditionDegraded, Status: metav1.ConditionTrue, Reason: "DeploymentUnavailable", Message: message}
		}
	case "ApplyFailed", "InvalidHostingConfig":
		degraded = metav1.Condition{Type: ConditionDegraded, Status: metav1.ConditionTrue, Reason: reason, Message: message}
	case "ForeignInstall", "WaitingForHostingConfig", ReasonExternallyManaged, ReasonWaitingForExternalOperator:
		degraded.Message = "the agent does not manage a HyperShift operator here: " + message
	}
	for _, o := range overrides {
		switch o.Type {
		case ConditionProgressing:
			progressing = o
		case ConditionDegraded:
			degraded = o
		}
	}
	operatorState.Reset()
	operatorState.WithLabelValues(reason).Set(1)
	healthy := (reason == "Installed" && len(overrides) == 0) || reason == "ForeignInstall" || reason == ReasonExternallyManaged
	return errors.Join(
		r.env.ReportOperatorHealth(ctx, hc, healthy),
		r.reporter.Set(ctx, metav1.Condition{Type: ConditionInstalled, Status: installed, Reason: reason, Message: message}, progressing, degraded))
}

// rolloutPhase decides a Deployment's rollout as `kubectl rollout status`
// does: "RollingOut" while its controller has not seen the spec, not every
// replica is updated or old replicas remain; "WaitingForAvailability" while
// fewer than the updated (and wanted) replicas are available; "" once done.
// Old replicas count until they are gone: an old pod still available while
// the new one crash-loops must not make a broken operator image look
// healthy (the health answer lets OCM's rollout move on, rollouthealth.go).
func rolloutPhase(d *appsv1.Deployment, replicas int32) string {
	st := d.Status
	switch {
	case st.ObservedGeneration < d.Generation || st.UpdatedReplicas < replicas || st.Replicas > st.UpdatedReplicas:
		return "RollingOut"
	case st.AvailableReplicas < replicas || st.AvailableReplicas < st.UpdatedReplicas:
		return "WaitingForAvailability"
	}
	return ""
}

// deploymentProblem describes why a Deployment is unavailable, if its
// conditions say: Available=False or ReplicaFailure=True, with their message.
func deploymentProblem(d *appsv1.Deployment) string {
	for _, c := range d.Status.Conditions {
		failing := (c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionFalse) ||
			(c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue)
		if failing && c.Message != "" {
			return "; " + c.Reason + ": " + c.Message
		}
	}
	return ""
}

func image(d *appsv1.Deployment) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		return c.Image
	}
	return "unknown"
}

// version is the image's tag (or digest), which is how HyperShift operator
// images are versioned.
func version(img string) string {
	if i := strings.LastIndex(img, "@"); i >= 0 {
		return img[i+1:]
	}
	if i := strings.LastIndex(img, ":"); i > strings.LastIndex(img, "/") {
		return img[i+1:]
	}
	return "latest"
}

// cleanupNamedHostedClusters is how many HostedClusters a blocked cleanup
// names; the rest are counted.
const cleanupNamedHostedClusters = 10

// hostedClustersExistMessage says which HostedClusters block the cleanup: the
// first page's names and, from the list's remaining item count, how many
// more.
func hostedClustersExistMessage(page *unstructured.UnstructuredList) string {
	names := make([]string, 0, len(page.Items))
	for _, hc := range page.Items {
		names = append(names, hc.GetNamespace()+"/"+hc.GetName())
	}
	count, listed := strconv.Itoa(len(names)), strings.Join(names, ", ")
	if more := page.GetRemainingItemCount(); more != nil && *more > 0 {
		count = strconv.FormatInt(int64(len(names))+*more, 10)
		listed += fmt.Sprintf(" and %d more", *more)
	} else if page.GetContinue() != "" {
		count = "More than " + count
		listed += " and more"
	}
	return fmt.Sprintf("%s HostedClusters still run on this cluster (%s): delete them, or their HostedClusterDeployments on the hub, before disabling the add-on",
		count, listed)
}

// Cleanup uninstalls what the agent installed. It refuses while any
// HostedCluster exists (their control planes run on this operator), leaves a
// foreign install alone, and keeps a CRD while objects of it remain. In the
// hands-off mode it removes nothing: the operator is another manager's,
// whatever installed it first.
func Cleanup(ctx context.Context, env *agent.Env) error {
	if external, err := externallyManaged(ctx, env); err != nil || external {
		return err
	}
	c, err := client.New(env.Managed, client.Options{Scheme: agent.Scheme})
	if err != nil {
		return err
	}
	hostedClusters := &unstructured.UnstructuredList{}
	hostedClusters.SetAPIVersion("hypershift.openshift.io/v1beta1")
	hostedClusters.SetKind("HostedClusterList")
	// One page: enough to name a few and count the rest (a management
	// cluster can host hundreds).
	err = c.List(ctx, hostedClusters, client.Limit(cleanupNamedHostedClusters))
	switch {
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("listing HostedClusters: %w", err)
	case len(hostedClusters.Items) > 0:
		return &agent.CleanupBlockedError{Reason: "HostedClustersExist", Message: hostedClustersExistMessage(hostedClusters)}
	}
	install, err := Render(everything())
	if err != nil {
		return err
	}
	// Two passes: an agent reconcile that was in flight when the cleanup
	// began may recreate an object the first pass removed.
	for pass := 0; pass < 2; pass++ {
		if err := deleteInstall(ctx, c, install); err != nil {
			return err
		}
		if err := waitNamespaceGone(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// everything is the spec and credentials of the largest install, whose
// objects Cleanup removes: every optional part (external-dns, every
// credentials Secret) included.
func everything() (*v1alpha1.HostingConfigSpec, Credentials, Cluster) {
	ref := v1alpha1.CredentialsSecretReference{Name: "any"}
	spec := &v1alpha1.HostingConfigSpec{Install: &v1alpha1.InstallOptions{
		OIDCStorage: &v1alpha1.OIDCStorageS3{CredentialsSecret: ref},
		ExternalDNS: &v1alpha1.ExternalDNSConfig{CredentialsSecret: ref},
		PrivatePlatform: &v1alpha1.PrivatePlatformConfig{Type: v1alpha1.PrivatePlatformAWS,
			AWS: &v1alpha1.AWSPrivatePlatform{CredentialsSecret: ref}},
	}}
	creds := Credentials{}
	for purpose := range credentialSecrets {
		creds[purpose] = nil
	}
	return spec, creds, Cluster{PrivateCAPITypes: true}
}

// deleteInstall deletes every object of the install that carries our label,
// last-applied first, keeping CRDs that still have objects.
func deleteInstall(ctx context.Context, c client.Client, install *Install) error {
	var errs []error
	for i := len(install.Objects) - 1; i >= 0; i-- {
		obj := install.Objects[i]
		live := &metav1.PartialObjectMetadata{}
		live.SetGroupVersionKind(obj.GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), live); err != nil {
			if !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
				errs = append(errs, err)
			}
			continue
		}
		if live.Labels[ManagedByLabel] != ManagedByValue {
			continue // not ours
		}
		if obj.GetKind() == "CustomResourceDefinition" {
			if inUse, err := crdInUse(ctx, c, obj); err != nil || inUse {
				if err != nil {
					errs = append(errs, err)
				}
				continue
			}
		}
		if err := c.Delete(ctx, live); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("deleting %s: %w", ObjectKey(obj), err))
		}
	}
	return errors.Join(errs...)
}

// waitNamespaceGone waits until the operator namespace is gone, so "done"
// means done.
func waitNamespaceGone(ctx context.Context, c client.Client) error {
	err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		ns := &metav1.PartialObjectMetadata{}
		ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
		return apierrors.IsNotFound(c.Get(ctx, types.NamespacedName{Name: Namespace}, ns)), nil
	})
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return fmt.Errorf("namespace %s is still terminating", Namespace)
}

// crdInUse reports whether any object of the CRD's kind remains.
func crdInUse(ctx context.Context, c client.Client, crd *unstructured.Unstructured) (bool, error) {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	for _, v := range versions {
		name, _, _ := unstructured.NestedString(v.(map[string]any), "name")
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion(group + "/" + name)
		list.SetKind(kind + "List")
		if err := c.List(ctx, list, client.Limit(1)); err != nil {
			if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
				continue
			}
			return false, err
		}
		return len(list.Items) > 0, nil
	}
	return false, nil
}
