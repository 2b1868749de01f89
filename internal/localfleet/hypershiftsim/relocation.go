package hypershiftsim

// Pause, etcd snapshot and restore: what HyperShift documents for moving a
// HostedCluster to another management cluster, played on the stand-in's
// guests. It follows
//
//   - support/util/pausereconcile.go (ProcessPausedUntilField,
//     GenerateReconciliationActiveCondition) and
//     hypershift-operator/controllers/hostedcluster/hostedcluster_controller.go
//     (Reconcile: ReconciliationActive is written into status, then a paused
//     HostedCluster is requeued after the pause and nothing else is
//     reconciled);
//   - docs/content/how-to/aws/etc-backup-restore.md: with reconciliation
//     paused the etcd writers are stopped, `etcdctl snapshot save` takes the
//     snapshot and it is uploaded (an HTTP PUT) to object storage; a
//     HostedCluster created with spec.etcd.managed.storage.restoreSnapshotURL
//     restores it "on initial startup, only when the etcd PV is empty";
//   - docs/content/how-to/disaster-recovery/etcd-snapshot-backup/backup-flow.md:
//     the snapshot's URL is carried on the HostedCluster in the annotation
//     hypershift.openshift.io/etcd-snapshot-url.
//
// Where the real procedure needs an admin (the exec of etcdctl) or OADP, the
// stand-in does it itself: a paused HostedCluster whose control plane keeps
// data (ControlPlanes implementing Snapshots) is snapshotted once, uploaded
// to the snapshot store, and annotated with the URL.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// AnnotationEtcdSnapshotURL carries the URL of the etcd snapshot of a
// paused HostedCluster (the annotation HyperShift's OADP plugin injects).
const AnnotationEtcdSnapshotURL = "hypershift.openshift.io/etcd-snapshot-url"

// Snapshots is implemented by ControlPlanes whose control planes keep data
// (hcpfleet.GuestControlPlanes): the stand-in then snapshots paused
// HostedClusters and restores new ones from restoreSnapshotURL.
type Snapshots interface {
	// Snapshot stops hc's control plane (its etcd writers) and returns its
	// etcd data.
	Snapshot(ctx context.Context, hc *hyperv1.HostedCluster) ([]byte, error)
	// Restore seeds hc's control plane with data before it first starts.
	// It writes nothing, and says so, when the control plane has data
	// already.
	Restore(ctx context.Context, hc *hyperv1.HostedCluster, data []byte) (bool, error)
}

// pausedUntil is upstream's ProcessPausedUntilField: a boolean, or an
// RFC3339 time before which reconciliation is paused (then requeue is the
// time left). Anything else is not paused, and an error.
func pausedUntil(field *string, now time.Time) (paused bool, requeue time.Duration, err error) {
	if field == nil {
		return false, 0, nil
	}
	if b, err := strconv.ParseBool(*field); err == nil {
		return b, 0, nil
	}
	if t, err := time.Parse(time.RFC3339, *field); err == nil {
		return now.Before(t), t.Sub(now), nil
	}
	return false, 0, fmt.Errorf("invalid value specified in pausedUntil field: %q. Considering the resource as not paused", *field)
}

// reconciliationActive is upstream's GenerateReconciliationActiveCondition.
func reconciliationActive(hc *hyperv1.HostedCluster, now time.Time) metav1.Condition {
	c := metav1.Condition{Type: string(hyperv1.ReconciliationActive), ObservedGeneration: hc.Generation, LastTransitionTime: metav1.NewTime(now)}
	paused, _, err := pausedUntil(hc.Spec.PausedUntil, now)
	switch {
	case paused:
		c.Status, c.Reason = metav1.ConditionFalse, hyperv1.ReconciliationPausedConditionReason
		c.Message = "Reconciliation paused until: " + *hc.Spec.PausedUntil
		if _, err := strconv.ParseBool(*hc.Spec.PausedUntil); err == nil {
			c.Message = "Reconciliation paused until field removed"
		}
	case err != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, hyperv1.ReconciliationInvalidPausedUntilConditionReason, "Invalid value provided for PausedUntil field"
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, hyperv1.AsExpectedReason, "Reconciliation active on resource"
	}
	return c
}

// reconcilePaused is the whole reconcile of a paused HostedCluster: its
// ReconciliationActive condition, and once the snapshot of its control
// plane with the URL annotated. Nothing else changes, as upstream.
func (r *hostedClusterReconciler) reconcilePaused(ctx context.Context, hc *hyperv1.HostedCluster, requeue time.Duration) (reconcile.Result, error) {
	s := simStatus{Conditions: append([]metav1.Condition(nil), hc.Status.Conditions...), Version: hc.Status.Version,
		ControlPlaneEndpoint: hc.Status.ControlPlaneEndpoint, KubeConfig: hc.Status.KubeConfig}
	meta.SetStatusCondition(&s.Conditions, reconciliationActive(hc, r.now()))
	if err := patchHostedClusterStatus(ctx, r.client, hc, s); err != nil {
		return reconcile.Result{}, err
	}
	ctrl.LoggerFrom(ctx).Info("Reconciliation paused", "pausedUntil", *hc.Spec.PausedUntil)
	snapshots, ok := r.opts.ControlPlanes.(Snapshots)
	if _, broken := hc.Annotations[AnnotationNoSnapshot]; !ok || broken || hc.Annotations[AnnotationEtcdSnapshotURL] != "" {
		return reconcile.Result{RequeueAfter: requeue}, nil
	}
	data, err := snapshots.Snapshot(ctx, hc)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("etcd snapshot of %s/%s: %w", hc.Namespace, hc.Name, err)
	}
	u, err := r.opts.SnapshotStore.upload(ctx, snapshotObjectName(hc), data)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("uploading the etcd snapshot of %s/%s: %w", hc.Namespace, hc.Name, err)
	}
	return reconcile.Result{RequeueAfter: requeue}, r.annotateSnapshot(ctx, hc, u)
}

// forgetSnapshot drops the URL of a snapshot taken during an earlier
// pause: the control plane has run since, so it no longer holds its data.
func (r *hostedClusterReconciler) forgetSnapshot(ctx context.Context, hc *hyperv1.HostedCluster) error {
	if _, ok := hc.Annotations[AnnotationEtcdSnapshotURL]; !ok {
		return nil
	}
	return r.annotateSnapshot(ctx, hc, "")
}

// annotateSnapshot sets (or, with "", removes) the snapshot annotation
// with a merge patch guarded by the resourceVersion read.
func (r *hostedClusterReconciler) annotateSnapshot(ctx context.Context, hc *hyperv1.HostedCluster, u string) error {
	patch := client.MergeFromWithOptions(hc.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if u == "" {
		delete(hc.Annotations, AnnotationEtcdSnapshotURL)
	} else {
		if hc.Annotations == nil {
			hc.Annotations = map[string]string{}
		}
		hc.Annotations[AnnotationEtcdSnapshotURL] = u
	}
	return r.client.Patch(ctx, hc, patch)
}

// restoredFromSnapshot: hc was created to restore an etcd snapshot.
func restoredFromSnapshot(hc *hyperv1.HostedCluster) bool {
	return hc.Spec.Etcd.Managed != nil && len(hc.Spec.Etcd.Managed.Storage.RestoreSnapshotURL) > 0
}

// restoreSnapshot seeds a HostedCluster's control plane, before it first
// starts, from spec.etcd.managed.storage.restoreSnapshotURL.
func (r *hostedClusterReconciler) restoreSnapshot(ctx context.Context, hc *hyperv1.HostedCluster) error {
	snapshots, ok := r.opts.ControlPlanes.(Snapshots)
	if !ok || hc.Spec.Etcd.Managed == nil || len(hc.Spec.Etcd.Managed.Storage.RestoreSnapshotURL) == 0 {
		return nil
	}
	if guests, ok := r.opts.ControlPlanes.(Guests); ok {
		if _, running := guests.GuestConfig(hc); running {
			return nil
		}
	}
	u := hc.Spec.Etcd.Managed.Storage.RestoreSnapshotURL[0]
	data, err := download(ctx, u)
	if err != nil {
		return fmt.Errorf("restoring %s/%s from its etcd snapshot: %w", hc.Namespace, hc.Name, err)
	}
	restored, err := snapshots.Restore(ctx, hc, data)
	if err != nil {
		return fmt.Errorf("restoring %s/%s from its etcd snapshot: %w", hc.Namespace, hc.Name, err)
	}
	if restored {
		ctrl.LoggerFrom(ctx).Info("restored the etcd snapshot", "url", redactURL(u))
	}
	return nil
}

// snapshotObjectName keys a snapshot by HostedCluster and UID (the UID
// differs on every management cluster) and the pause it was taken in.
func snapshotObjectName(hc *hyperv1.HostedCluster) string {
	return fmt.Sprintf("%s-%s-%s-%d.db", hc.Namespace, hc.Name, hc.UID, hc.Generation)
}

// redactURL drops a URL's query: a pre-signed URL's signature is a
// credential.
func redactURL(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		return u[:i]
	}
	return u
}

func download(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", redactURL(u), resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// SnapshotStore is the object storage the stand-ins of a fleet upload etcd
// snapshots to and restore them from (an S3 bucket with pre-signed URLs in
// HyperShift's docs): PUT and GET of objects under /snapshots/ on a
// loopback HTTP server, started on first use. One store serves every
// management cluster's stand-in, as one bucket would.
type SnapshotStore struct {
	once    sync.Once
	base    string
	err     error
	mu      sync.Mutex
	objects map[string][]byte
}

// defaultSnapshotStore serves the stand-ins whose Options name none.
var defaultSnapshotStore = &SnapshotStore{}

func (s *SnapshotStore) start() error {
	s.once.Do(func() {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			s.err = err
			return
		}
		s.objects = map[string][]byte{}
		s.base = "http://" + l.Addr().String() + "/snapshots/"
		srv := &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(l) }() // for the life of the process, as the bucket
	})
	return s.err
}

func (s *SnapshotStore) serve(w http.ResponseWriter, req *http.Request) {
	name, ok := strings.CutPrefix(req.URL.Path, "/snapshots/")
	if !ok || name == "" || strings.Contains(name, "/") {
		http.NotFound(w, req)
		return
	}
	switch req.Method {
	case http.MethodPut:
		data, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.objects[name] = data
		s.mu.Unlock()
	case http.MethodGet:
		s.mu.Lock()
		data, found := s.objects[name]
		s.mu.Unlock()
		if !found {
			http.NotFound(w, req)
			return
		}
		_, _ = w.Write(data)
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// upload PUTs data as object name and returns the URL to GET it from.
func (s *SnapshotStore) upload(ctx context.Context, name string, data []byte) (string, error) {
	if err := s.start(); err != nil {
		return "", err
	}
	u := s.base + url.PathEscape(name)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, bytes.NewReader(data))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("PUT %s: %s", u, resp.Status)
	}
	return u, nil
}
