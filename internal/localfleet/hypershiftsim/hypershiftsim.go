// Package hypershiftsim is the local fleet's stand-in for the HyperShift
// operator. Nothing here runs the real operator (no pods, no release
// payloads), so when the agent has installed the operator Deployment, the
// kubelet stand-in runs this program in its place, with the operator's own
// ServiceAccount. It does what the fleet can observe of the operator:
//
//   - publishes the supported-versions ConfigMap (SupportedVersions);
//
//   - HostedClusters: adds the finalizer hypershift.openshift.io/finalizer,
//     creates the control-plane namespace <namespace>-<name>, and drives
//     status the way the operator does: conditions (Available, Progressing,
//     Degraded, ValidReleaseImage, ReconciliationSucceeded, … with
//     HyperShift's reasons), version (desired, history newest first going
//     Partial → Completed, observedGeneration), controlPlaneEndpoint and
//     kubeconfig, with the admin kubeconfig Secret <name>-admin-kubeconfig
//     (key "kubeconfig") in the HostedCluster's namespace and as
//     admin-kubeconfig in the control-plane namespace, both at the external
//     address; and there, for components next to the control plane, the
//     kube-apiserver Service and service-network-admin-kubeconfig at its
//     in-cluster address https://kube-apiserver:6443, which programs of
//     that namespace reach through Options.ClusterDNS (kasservice.go;
//     annotation service-network-down below breaks it). A rollout (the
//     first one or an upgrade after spec.release.image changed) is
//     Progressing for Options.RolloutDuration, then Completed. The OpenShift
//     version is read from the release image tag
//     (quay.io/openshift-release-dev/ocp-release:4.18.5-multi → 4.18.5); a
//     release whose minor version is not in SupportedVersions gets
//     ValidReleaseImage=False (reason InvalidImage) and is not rolled out.
//     status.version.availableUpdates and conditionalUpdates come from the
//     update graph a test serves for spec.channel (ServeUpdateGraph), as
//     the hosted cluster-version operator computes them (updates.go).
//
//   - NodePools: adds the finalizer; after the rollout duration, and once
//     their HostedCluster is available, status.replicas follows
//     spec.replicas (or spec.autoScaling.min) and status.version the release;
//     conditions Ready, AllMachinesReady, UpdatingVersion, ValidReleaseImage.
//
//   - Deletion: a HostedCluster being deleted keeps its finalizer for the
//     rollout duration, then its NodePools, the control-plane namespace and
//     the kubeconfig Secret are deleted; the finalizer goes once the NodePools
//     are gone, so whoever waits for the HostedCluster to be really gone waits
//     for something real.
//
//   - Pause, snapshot, restore (relocation.go): spec.pausedUntil stops
//     reconciliation (ReconciliationActive=False, ReconciliationPaused), as
//     upstream; with ControlPlanes that keep data (Snapshots), a paused
//     HostedCluster's control plane is stopped, its etcd data uploaded to
//     the SnapshotStore and the URL annotated
//     (hypershift.openshift.io/etcd-snapshot-url); a HostedCluster created
//     with spec.etcd.managed.storage.restoreSnapshotURL starts from it.
//
//   - Identity: an unpaused HostedCluster without spec.clusterID gets a
//     random UUID there, as upstream's defaultClusterIDsIfNeeded writes it.
//
// Failure injection, for demos and tests, by annotations on a HostedCluster
// (the value is the message the conditions carry; empty means a default):
//
//   - hypershiftsim.hcpfleet.io/never-available: the control plane never
//     comes up: Available=False (WaitingForAvailable), Progressing stays
//     True, no kubeconfig is published;
//   - hypershiftsim.hcpfleet.io/restored-never-available: as never-available,
//     but only for a HostedCluster restored from an etcd snapshot
//     (spec.etcd.managed.storage.restoreSnapshotURL): a relocation's
//     destination that never comes up, while its source runs;
//   - hypershiftsim.hcpfleet.io/no-snapshot: a paused HostedCluster reports
//     ReconciliationPaused but its etcd snapshot is never taken (no
//     etcd-snapshot-url annotation): a backup that never completes;
//   - hypershiftsim.hcpfleet.io/degraded: Degraded=True (UnavailableReplicas);
//   - hypershiftsim.hcpfleet.io/rollout-duration: a Go duration ("30s")
//     replacing Options.RolloutDuration for this HostedCluster.
//   - hypershiftsim.hcpfleet.io/failing-release: a release image (the
//     value) whose upgrade fails on this HostedCluster: while
//     spec.release.image is that image, its history entry stays Partial,
//     Progressing stays True, Degraded=True (UnavailableReplicas,
//     "kube-apiserver deployment has 1 unavailable replicas") and
//     ClusterVersionSucceeding=False (ClusterOperatorDegraded), as HyperShift
//     reports a release whose kube-apiserver does not come up; the control
//     plane stays Available on the release it ran. Removing the annotation
//     lets the upgrade complete.
//   - hypershiftsim.hcpfleet.io/service-network-down: the kube-apiserver
//     Service no longer answers inside the control-plane namespace;
//   - hypershiftsim.hcpfleet.io/catalogs-down: OLM catalogs
//     ("redhat-marketplace,community-operators", namespace/name outside
//     openshift-marketplace) whose catalog servers are stopped (with guest
//     control planes; see catalogs.go, guestolm.go).
//
// Options.OperatorFailure makes the operator itself fail: the program exits
// at once with that message, so the kubelet stand-in reports its Deployment
// as crash-looping and nothing is reconciled, as with a broken operator.
//
// The hosted control plane itself is behind ControlPlanes. The default
// (EndpointOnly) runs none: the kubeconfig is a valid kubeconfig pointing at
// the published controlPlaneEndpoint, where nothing answers.
// hcpfleet.GuestControlPlanes starts a real kube-apiserver per HostedCluster
// instead (`localfleet up` and the e2e suite use it), so the admin
// kubeconfig reaches a real API server; with those guests the stand-in also
// plays, in each guest, olm-operator and the cluster-version operator for
// upgrades, from upstream's rules and never hcp-fleet's (olmrule.go,
// cvo.go, upgradeable.go), the control-plane operator and HCCO for OLM's
// default catalogs (catalogs.go), and the guest's OLM for every other
// CatalogSource (guestolm.go). Releases pinned by digest have a version
// once ServeRelease names it.
//
// Test and demo infrastructure only; never used by product code.
package hypershiftsim

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/clusterdns"
)

// SupportedVersions are the OpenShift minor versions the stand-in claims to
// support, newest first, as the real operator lists them.
var SupportedVersions = []string{"4.19", "4.18", "4.17", "4.16", "4.15", "4.14"}

// Failure-injection annotations on a HostedCluster (see the package comment).
const (
	AnnotationNeverAvailable  = "hypershiftsim.hcpfleet.io/never-available"
	AnnotationDegraded        = "hypershiftsim.hcpfleet.io/degraded"
	AnnotationRolloutDuration = "hypershiftsim.hcpfleet.io/rollout-duration"
	AnnotationFailingRelease  = "hypershiftsim.hcpfleet.io/failing-release"
	// AnnotationRestoredNeverAvailable and AnnotationNoSnapshot: see the
	// package comment.
	AnnotationRestoredNeverAvailable = "hypershiftsim.hcpfleet.io/restored-never-available"
	AnnotationNoSnapshot             = "hypershiftsim.hcpfleet.io/no-snapshot"
)

// Finalizer is the finalizer HyperShift puts on HostedClusters and NodePools.
const Finalizer = "hypershift.openshift.io/finalizer"

// KubeconfigKey is the data key of the admin kubeconfig Secret.
const KubeconfigKey = "kubeconfig"

// DefaultRolloutDuration is how long a rollout, a NodePool scale-up and a
// deletion take by default: long enough to see Progressing, short enough
// for demos.
const DefaultRolloutDuration = 1500 * time.Millisecond

// Options tune the stand-in.
type Options struct {
	// RolloutDuration is how long a HostedCluster rollout (creation or
	// upgrade), a NodePool change and a deletion take. Zero means
	// DefaultRolloutDuration.
	RolloutDuration time.Duration
	// OperatorFailure, when set, makes the operator fail at start with this
	// message (a degraded, crash-looping operator).
	OperatorFailure string
	// ControlPlanes runs the hosted control planes; nil means EndpointOnly.
	ControlPlanes ControlPlanes
	// ClusterDNS, when set, is the management cluster's Service network:
	// the kube-apiserver Service of each control-plane namespace is routed
	// to its control plane's real listener there (kasservice.go).
	ClusterDNS *clusterdns.Table
	// SnapshotStore is where etcd snapshots of paused HostedClusters are
	// uploaded (relocation.go); nil means one store for the process.
	SnapshotStore *SnapshotStore
}

func (o Options) withDefaults() Options {
	if o.RolloutDuration <= 0 {
		o.RolloutDuration = DefaultRolloutDuration
	}
	if o.ControlPlanes == nil {
		o.ControlPlanes = EndpointOnly{}
	}
	if o.SnapshotStore == nil {
		o.SnapshotStore = defaultSnapshotStore
	}
	return o
}

// Operator is the kubelet stand-in program for the HyperShift operator
// image, with default options.
func Operator(ctx context.Context, args []string) error {
	return Program(Options{})(ctx, args)
}

// Program returns the kubelet stand-in program for the HyperShift operator
// image with the given options.
func Program(opts Options) func(ctx context.Context, args []string) error {
	return func(ctx context.Context, args []string) error {
		namespace, kubeconfig, err := parseArgs(args)
		if err != nil {
			return err
		}
		if opts.OperatorFailure != "" {
			return fmt.Errorf("hypershift operator (stand-in) failing as asked: %s", opts.OperatorFailure)
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return err
		}
		return Run(ctx, cfg, namespace, opts)
	}
}

// parseArgs reads --namespace and --kubeconfig from the operator's command
// line and ignores every other operator flag.
func parseArgs(args []string) (namespace, kubeconfig string, err error) {
	fs := flag.NewFlagSet("hypershift-operator (stand-in)", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	ns := fs.String("namespace", "hypershift", "")
	kc := fs.String("kubeconfig", "", "")
	if len(args) > 0 && args[0] == "run" {
		args = args[1:]
	}
	var known []string
	for _, a := range args {
		if strings.HasPrefix(a, "--namespace=") || strings.HasPrefix(a, "--kubeconfig=") {
			known = append(known, a)
		}
	}
	if err := fs.Parse(known); err != nil {
		return "", "", err
	}
	return *ns, *kc, nil
}

var scheme = runtime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(hyperv1.AddToScheme(scheme))
}

// Run plays the operator on the cluster behind cfg until ctx ends: it
// publishes the supported versions in namespace and reconciles HostedClusters
// and NodePools.
func Run(ctx context.Context, cfg *rest.Config, namespace string, opts Options) error {
	opts = opts.withDefaults()
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := publishSupportedVersions(ctx, client, namespace); err != nil {
		return fmt.Errorf("publishing supported versions: %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// One stand-in per management cluster, all in one process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return err
	}
	if err := setupHostedClusters(mgr, opts); err != nil {
		return err
	}
	if err := setupNodePools(mgr, opts); err != nil {
		return err
	}
	if err := mgr.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

func publishSupportedVersions(ctx context.Context, client kubernetes.Interface, namespace string) error {
	data, err := json.Marshal(map[string][]string{"versions": SupportedVersions})
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "supported-versions", Namespace: namespace,
			Labels: map[string]string{"hypershift.openshift.io/supported-versions": "true"}},
		Data: map[string]string{"supported-versions": string(data), "server-version": "hypershiftsim"},
	}
	_, err = client.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = client.CoreV1().ConfigMaps(namespace).Update(ctx, cm, metav1.UpdateOptions{})
	}
	return err
}
