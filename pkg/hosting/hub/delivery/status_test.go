package delivery

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/olm"
)

func str(s string) *string { return &s }
func i64(v int64) *int64   { return &v }

func feedback(kv map[string]string) workv1.StatusFeedbackResult {
	var fb workv1.StatusFeedbackResult
	for k, v := range kv {
		fb.Values = append(fb.Values, workv1.FeedbackValue{Name: k, Value: workv1.FieldValue{Type: workv1.String, String: str(v)}})
	}
	return fb
}

func appliedWork(hc map[string]string, pools map[string]workv1.StatusFeedbackResult) *workv1.ManifestWork {
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "hcd-ns.x", Namespace: "cluster-1", Generation: 2}}
	w.Status.Conditions = []metav1.Condition{{Type: workv1.WorkApplied, Status: metav1.ConditionTrue, ObservedGeneration: 2}}
	w.Status.ResourceStatus.Manifests = append(w.Status.ResourceStatus.Manifests, workv1.ManifestCondition{
		ResourceMeta: workv1.ManifestResourceMeta{Resource: "hostedclusters", Name: "x", Namespace: "clusters"}, StatusFeedbacks: feedback(hc)})
	for name, fb := range pools {
		w.Status.ResourceStatus.Manifests = append(w.Status.ResourceStatus.Manifests, workv1.ManifestCondition{
			ResourceMeta: workv1.ManifestResourceMeta{Resource: "nodepools", Name: name, Namespace: "clusters"}, StatusFeedbacks: fb})
	}
	return w
}

var upHost = Host{Cluster: "cluster-1", Exists: true, Available: true, AddOnAvailable: true}

func cond(t *testing.T, s Status, typ string) metav1.Condition {
	t.Helper()
	c := meta.FindStatusCondition(s.Conditions, typ)
	if c == nil {
		t.Fatalf("no %s condition in %+v", typ, s.Conditions)
	}
	return *c
}

func TestComputeStatusAvailable(t *testing.T) {
	hc := map[string]string{
		fbAvailable: "True", fbAvailableMessage: "The hosted control plane is available",
		fbProgressing: "False", fbDegraded: "False", fbValidRelease: "True",
		fbDesiredVersion: "4.18.5", fbDesiredImage: "img:4.18.5", fbCurrentVersion: "4.18.5", fbLatestState: "Completed", fbLatestVersion: "4.18.5",
		fbLatestCompletion: "2026-01-02T03:04:05Z", fbEndpointHost: "api.x.example.com", fbEndpointPort: "6443",
	}
	pool := workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{
		{Name: fbReplicas, Value: workv1.FieldValue{Type: workv1.Integer, Integer: i64(2)}},
		{Name: fbDesiredReplicas, Value: workv1.FieldValue{Type: workv1.Integer, Integer: i64(3)}},
		{Name: fbReady, Value: workv1.FieldValue{Type: workv1.String, String: str("True")}},
	}}
	s := ComputeStatus(Observed{Generation: 2, NodePools: []string{"x-workers"}, Work: appliedWork(hc, map[string]workv1.StatusFeedbackResult{"x-workers": pool}), Host: upHost})
	for typ, want := range map[string]metav1.ConditionStatus{
		v1alpha1.ConditionDelivered: "True", v1alpha1.ConditionAvailable: "True", v1alpha1.ConditionProgressing: "False",
		v1alpha1.ConditionDegraded: "False", v1alpha1.ConditionHostingClusterAvailable: "True", v1alpha1.ConditionNodePoolsReady: "False",
	} {
		if c := cond(t, s, typ); c.Status != want {
			t.Errorf("%s = %s (%s: %s), want %s", typ, c.Status, c.Reason, c.Message, want)
		}
	}
	if c := cond(t, s, v1alpha1.ConditionNodePoolsReady); c.Message != "x-workers 2/3 ready" {
		t.Errorf("NodePoolsReady message %q", c.Message)
	}
	if s.Version == nil || s.Version.Current != "4.18.5" || s.Version.History[0].State != v1alpha1.VersionUpdateCompleted ||
		s.Version.History[0].CompletionTime == nil || !s.Version.History[0].CompletionTime.Equal(&metav1.Time{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}) {
		t.Errorf("version %+v", s.Version)
	}
	if s.ControlPlaneEndpoint == nil || s.ControlPlaneEndpoint.Port != 6443 {
		t.Errorf("endpoint %+v", s.ControlPlaneEndpoint)
	}
}

func TestComputeStatusProblems(t *testing.T) {
	// An apply failure on the host names the object and the host's words.
	w := appliedWork(nil, nil)
	w.Status.Conditions[0].Status = metav1.ConditionFalse
	w.Status.ResourceStatus.Manifests[0].Conditions = []metav1.Condition{{Type: workv1.ManifestApplied, Status: metav1.ConditionFalse, Message: "admission webhook denied"}}
	w.Status.ResourceStatus.Manifests[0].ResourceMeta.Kind = "HostedCluster"
	s := ComputeStatus(Observed{Generation: 1, Work: w, Host: upHost})
	if c := cond(t, s, v1alpha1.ConditionDelivered); c.Reason != v1alpha1.ReasonApplyFailed ||
		c.Message != "management cluster cluster-1 could not apply: HostedCluster clusters/x: admission webhook denied" {
		t.Errorf("Delivered %s: %s", c.Reason, c.Message)
	}
	if c := cond(t, s, v1alpha1.ConditionDegraded); c.Status != "True" || c.Reason != v1alpha1.ReasonApplyFailed {
		t.Errorf("Degraded %s %s", c.Status, c.Reason)
	}
	// A server-side apply conflict (an object on the host someone else
	// holds fields of) names the object, the host's words, and what to do.
	w = appliedWork(nil, nil)
	w.Status.Conditions[0].Status = metav1.ConditionFalse
	w.Status.ResourceStatus.Manifests = append(w.Status.ResourceStatus.Manifests, workv1.ManifestCondition{
		ResourceMeta: workv1.ManifestResourceMeta{Kind: "Secret", Resource: "secrets", Name: "x-pull-secret-0123", Namespace: "clusters"},
		Conditions: []metav1.Condition{{Type: workv1.ManifestApplied, Status: metav1.ConditionFalse,
			Message: `Failed to apply manifest: Apply failed with 1 conflict: conflict with "someone-else" using v1: .data..dockerconfigjson`}}})
	s = ComputeStatus(Observed{Generation: 1, Work: w, Host: upHost})
	if c := cond(t, s, v1alpha1.ConditionDelivered); c.Status != "False" || c.Reason != v1alpha1.ReasonOwnedByAnother ||
		!strings.Contains(c.Message, `Secret clusters/x-pull-secret-0123 belongs to another field manager ("someone-else") and is never merged: `+
			`Failed to apply manifest: Apply failed with 1 conflict: conflict with "someone-else" using v1: .data..dockerconfigjson`) ||
		!strings.Contains(c.Message, ownedByAnotherHint) {
		t.Errorf("Delivered on conflict %s %s: %s", c.Status, c.Reason, c.Message)
	}
	if c := cond(t, s, v1alpha1.ConditionDegraded); c.Status != "True" || !strings.Contains(c.Message, "someone-else") {
		t.Errorf("Degraded on conflict %s: %s", c.Status, c.Message)
	}
	// An invalid release and a failed CAPI migration both show in Degraded.
	s = ComputeStatus(Observed{Work: appliedWork(map[string]string{fbAvailable: "False", fbAvailableReason: "InvalidImage",
		fbValidRelease: "False", fbValidReleaseMsg: "4.9 is not supported", fbMigrationFailed: "copy: boom"}, nil), Host: upHost})
	if c := cond(t, s, v1alpha1.ConditionDegraded); c.Status != "True" || !strings.Contains(c.Message, "release image: 4.9 is not supported") ||
		!strings.Contains(c.Message, "migration to private CAPI types failed: copy: boom") {
		t.Errorf("Degraded %s: %s", c.Status, c.Message)
	}
	// The cluster-version operator failing (ClusterVersionSucceeding
	// False) alone is Degraded, with HyperShift's reason.
	s = ComputeStatus(Observed{Work: appliedWork(map[string]string{fbAvailable: "True", fbDegraded: "False",
		fbCVSucceeding: "False", fbCVSucceedingReason: "ClusterOperatorDegraded", fbCVSucceedingMessage: "Cluster operator kube-apiserver is degraded"}, nil), Host: upHost})
	if c := cond(t, s, v1alpha1.ConditionDegraded); c.Status != "True" || c.Reason != "ClusterOperatorDegraded" ||
		!strings.Contains(c.Message, "cluster version: Cluster operator kube-apiserver is degraded") {
		t.Errorf("Degraded with the CVO failing %s %s: %s", c.Status, c.Reason, c.Message)
	}
	s = ComputeStatus(Observed{Work: appliedWork(map[string]string{fbAvailable: "True", fbDegraded: "False", fbCVSucceeding: "True"}, nil), Host: upHost})
	if c := cond(t, s, v1alpha1.ConditionDegraded); c.Status != "False" {
		t.Errorf("Degraded with the CVO succeeding %s %s: %s", c.Status, c.Reason, c.Message)
	}
	// A host that stopped reporting: the last status is kept but marked.
	down := upHost
	down.Available = false
	s = ComputeStatus(Observed{Work: appliedWork(map[string]string{fbAvailable: "True"}, nil), Host: down})
	if c := cond(t, s, v1alpha1.ConditionHostingClusterAvailable); c.Status != "False" || c.Reason != v1alpha1.ReasonHostingClusterUnavailable {
		t.Errorf("HostingClusterAvailable %s %s", c.Status, c.Reason)
	}
	if c := cond(t, s, v1alpha1.ConditionAvailable); c.Status != "Unknown" || !strings.Contains(c.Message, "last reported Available=True") {
		t.Errorf("Available %s: %s", c.Status, c.Message)
	}
	s = ComputeStatus(Observed{Work: nil, Host: Host{Cluster: "gone"}})
	if c := cond(t, s, v1alpha1.ConditionHostingClusterAvailable); c.Reason != v1alpha1.ReasonHostingClusterLost {
		t.Errorf("lost host: %s", c.Reason)
	}
	// Raw JSON feedback (the work agent's RawFeedbackJsonString gate) of a
	// multi-match is read as its first item.
	if got := firstOfJSON(`["4.18.5","4.17.3"]`); got != "4.18.5" {
		t.Errorf("firstOfJSON = %q", got)
	}
}

// TestDeletionOnLostHost: deleting a hosted cluster whose host is
// unavailable waits, then times out with a clear condition, and completes
// only when the user annotates it.
func TestDeletionOnLostHost(t *testing.T) {
	scheme := testScheme()
	ctx := context.Background()
	deleted := metav1.NewTime(time.Now().Add(-time.Hour))
	hcd := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x", Finalizers: []string{Finalizer}, DeletionTimestamp: &deleted},
		Status: v1alpha1.HostedClusterDeploymentStatus{HostingCluster: "cluster-1"}}
	work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-1", Name: hosting.WorkName("ns", "x"),
		Finalizers: []string{"cluster.open-cluster-management.io/manifest-work-cleanup"}}}
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster-1"}} // no Available condition: unavailable
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(hcd, work, mc).WithStatusSubresource(hcd).Build()
	r := &Reconciler{client: c, reader: c, opts: Options{LostHostTimeout: 10 * time.Minute}}
	get := func() (*v1alpha1.HostedClusterDeployment, *workv1.ManifestWork) {
		h, w := &v1alpha1.HostedClusterDeployment{}, &workv1.ManifestWork{}
		_ = c.Get(ctx, client.ObjectKeyFromObject(hcd), h)
		if err := c.Get(ctx, client.ObjectKeyFromObject(work), w); err != nil {
			w = nil
		}
		return h, w
	}
	h, w := get()
	// The fake client cannot apply server-side; check the computed status.
	host, _ := r.host(ctx, "cluster-1")
	if host.Available {
		t.Fatal("host should be unavailable")
	}
	observed := func(h *v1alpha1.HostedClusterDeployment, w *workv1.ManifestWork) Status {
		var got Status
		rr := &Reconciler{client: statusCapture{Client: c, capture: func(s Status) { got = s }}, reader: r.reader, opts: r.opts, recorder: r.recorder}
		_, _ = rr.finalize(ctx, h, host, w)
		return got
	}
	// Deleted an hour ago, host unavailable, no annotation: timed out, and
	// the message tells the user how to proceed; the ManifestWork stays.
	s := observed(h, w)
	if d := cond(t, s, v1alpha1.ConditionDelivered); d.Reason != v1alpha1.ReasonDeletionTimedOut ||
		!strings.Contains(d.Message, "kubectl annotate hostedclusterdeployment -n ns x hcpfleet.io/abandon-hosted-cluster=true") {
		t.Errorf("Delivered %s: %s", d.Reason, d.Message)
	}
	if _, w = get(); w == nil || len(w.Finalizers) == 0 {
		t.Fatal("the ManifestWork must not be given up without the annotation")
	}
	// Recently deleted: it waits and says so.
	recent := metav1.NewTime(time.Now().Add(-time.Minute))
	h.DeletionTimestamp = &recent
	if d := cond(t, observed(h, w), v1alpha1.ConditionDelivered); d.Reason != v1alpha1.ReasonDeleting || !strings.Contains(d.Message, "waiting up to 10m0s") {
		t.Errorf("Delivered %s: %s", d.Reason, d.Message)
	}
	// Annotated after the timeout: the ManifestWork's finalizers go.
	h.DeletionTimestamp = &deleted
	h.Annotations = map[string]string{AbandonAnnotation: "true"}
	_ = observed(h, w)
	if _, w = get(); w != nil && len(w.Finalizers) > 0 {
		t.Errorf("annotated: ManifestWork finalizers %v", w.Finalizers)
	}
}

// statusCapture records the status the reconciler would apply (the fake
// client does not implement server-side apply).
type statusCapture struct {
	client.Client
	capture func(Status)
}

func (s statusCapture) Status() client.SubResourceWriter { return captureWriter{s.capture} }

type captureWriter struct{ capture func(Status) }

func (w captureWriter) Create(context.Context, client.Object, client.Object, ...client.SubResourceCreateOption) error {
	return nil
}
func (w captureWriter) Update(context.Context, client.Object, ...client.SubResourceUpdateOption) error {
	return nil
}
func (w captureWriter) Patch(_ context.Context, obj client.Object, _ client.Patch, _ ...client.SubResourcePatchOption) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	var st v1alpha1.HostedClusterDeploymentStatus
	if m, ok := u.Object["status"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &st); err != nil {
			return err
		}
	}
	w.capture(Status{Conditions: st.Conditions, ManifestWork: st.ManifestWork})
	return nil
}

// TestFinalizeConfirmsTheWorkIsGone: an HCD deleted right after its
// ManifestWork was created, before the cache shows the work, keeps its
// finalizer and has the work deleted; only when the API server says the
// work is gone does the finalizer go.
func TestFinalizeConfirmsTheWorkIsGone(t *testing.T) {
	scheme := testScheme()
	ctx := context.Background()
	// Deleted long enough ago that the work's going is trusted at once
	// (leftoverSettle; TestFinalizeSettles).
	deleted := metav1.NewTime(time.Now().Add(-time.Minute))
	hcd := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x", Finalizers: []string{Finalizer}, DeletionTimestamp: &deleted},
		Status: v1alpha1.HostedClusterDeploymentStatus{HostingCluster: "cluster-1"}}
	work := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-1", Name: hosting.WorkName("ns", "x")}}
	// The cache has the HCD but not yet the work; the API server has both.
	cache := fake.NewClientBuilder().WithScheme(scheme).WithObjects(hcd).Build()
	apiServer := fake.NewClientBuilder().WithScheme(scheme).WithObjects(hcd.DeepCopy(), work).Build()
	r := &Reconciler{client: statusCapture{Client: cache, capture: func(Status) {}}, reader: apiServer}
	host := Host{Cluster: "cluster-1", Exists: true, Available: true, AddOnAvailable: true}

	if _, err := r.finalize(ctx, hcd, host, nil); err != nil {
		t.Fatal(err)
	}
	got := &v1alpha1.HostedClusterDeployment{}
	if err := cache.Get(ctx, client.ObjectKeyFromObject(hcd), got); err != nil {
		t.Fatalf("the HCD is gone while its ManifestWork lives on: %v", err)
	}
	if !slices.Contains(got.Finalizers, Finalizer) {
		t.Fatal("the finalizer was removed while the ManifestWork lives on")
	}

	// The API server confirms the work is gone: the finalizer goes.
	if err := apiServer.Delete(ctx, work); err != nil {
		t.Fatal(err)
	}
	if _, err := r.finalize(ctx, got, host, nil); err != nil {
		t.Fatal(err)
	}
	if err := cache.Get(ctx, client.ObjectKeyFromObject(hcd), got); !apierrors.IsNotFound(err) {
		t.Fatalf("the HCD stays after its ManifestWork is gone: %v %v", err, got.Finalizers)
	}
}

// TestComputeStatusSubscriptionDefaults: SubscriptionDefaultsApplied only
// while the hosted cluster has defaults, from the agent's report as fed
// back.
func TestComputeStatusSubscriptionDefaults(t *testing.T) {
	d := &v1alpha1.SubscriptionDefaults{NodeSelector: map[string]v1alpha1.LabelValue{"pool": "infra"}}
	report := `{"defaults":"` + olm.FingerprintOf(d) + `","defaulted":2,"own":0}`
	work := appliedWork(map[string]string{fbSubscriptionDefaults: report}, nil)
	s := ComputeStatus(Observed{Generation: 2, Work: work, Host: upHost, SubscriptionDefaults: d})
	if c := cond(t, s, v1alpha1.ConditionSubscriptionDefaultsApplied); c.Status != metav1.ConditionTrue || c.Message != "set on 2 Subscriptions" {
		t.Errorf("SubscriptionDefaultsApplied %+v", c)
	}
	s = ComputeStatus(Observed{Generation: 2, Work: work, Host: upHost})
	if c := meta.FindStatusCondition(s.Conditions, v1alpha1.ConditionSubscriptionDefaultsApplied); c != nil {
		t.Errorf("without defaults: %+v", c)
	}
}

// TestComputeStatusCatalogs: CatalogsReady follows the agent's catalog
// report through the feedback, Unknown without one, none before a
// ManifestWork exists or while deleting.
func TestComputeStatusCatalogs(t *testing.T) {
	failing := olm.NewCatalogHealth(map[string]string{"redhat-operators": "READY", "redhat-marketplace": "TRANSIENT_FAILURE"}).Encode()
	for _, tc := range []struct {
		report string
		status metav1.ConditionStatus
		reason string
	}{
		{"", metav1.ConditionUnknown, v1alpha1.ReasonStatusUnknown},
		{olm.NewCatalogHealth(map[string]string{"redhat-operators": "READY"}).Encode(), metav1.ConditionTrue, v1alpha1.ReasonAsExpected},
		{failing, metav1.ConditionFalse, v1alpha1.ReasonCatalogsNotReady},
	} {
		hc := map[string]string{fbAvailable: "True"}
		if tc.report != "" {
			hc[fbCatalogHealth] = tc.report
		}
		c := cond(t, ComputeStatus(Observed{Generation: 2, Work: appliedWork(hc, nil), Host: upHost}), v1alpha1.ConditionCatalogsReady)
		if c.Status != tc.status || c.Reason != tc.reason || c.ObservedGeneration != 2 {
			t.Errorf("report %q: CatalogsReady %s %s (%s), want %s %s", tc.report, c.Status, c.Reason, c.Message, tc.status, tc.reason)
		}
	}
	for _, o := range []Observed{{Generation: 2, Host: upHost}, {Generation: 2, Host: upHost, Deleting: true, Work: appliedWork(map[string]string{fbCatalogHealth: failing}, nil)}} {
		if c := meta.FindStatusCondition(ComputeStatus(o).Conditions, v1alpha1.ConditionCatalogsReady); c != nil {
			t.Errorf("CatalogsReady %+v without a ManifestWork or while deleting", c)
		}
	}
}
