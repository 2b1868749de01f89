package connector

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension/agent/objects"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// Options tune the connector.
type Options struct {
	// Namespace is the control-plane namespace it works in.
	Namespace string
	// Kubeconfig is the management cluster, as the connector's
	// ServiceAccount; empty means in-cluster.
	Kubeconfig string
	// GuestKubeconfig is the mounted service-network kubeconfig file.
	GuestKubeconfig string
	// DialContext opens connections to the hosted cluster; nil means
	// net.Dialer's, as in a pod, whose resolver finds the kube-apiserver
	// Service (the local fleet hands in its pod network instead).
	DialContext func(ctx context.Context, network, address string) (net.Conn, error)
	// ProbeInterval is how often a phase not yet available (or a deletion
	// not yet done) is worked on again.
	ProbeInterval time.Duration
	// Resync is how often an available phase is applied again (drift).
	Resync time.Duration
}

// Main is the agent subcommand: flags --namespace, --kubeconfig and
// --guest-kubeconfig.
func Main(ctx context.Context, args []string, stderr io.Writer) error {
	return Program(Options{})(ctx, args, stderr)
}

// Program is Main with base options (DialContext, intervals) the flags do
// not set.
func Program(base Options) func(ctx context.Context, args []string, stderr io.Writer) error {
	return func(ctx context.Context, args []string, stderr io.Writer) error {
		opts := base
		fs := flag.NewFlagSet("hcp-fleet-agent "+Command, flag.ContinueOnError)
		fs.SetOutput(stderr)
		fs.StringVar(&opts.Namespace, "namespace", "", "the hosted control-plane namespace the connector works in")
		fs.StringVar(&opts.Kubeconfig, "kubeconfig", "", "the management cluster's kubeconfig (default: in-cluster)")
		fs.StringVar(&opts.GuestKubeconfig, "guest-kubeconfig", filepath.Join(MountPath, hosting.KubeconfigKey), "the mounted service-network-admin-kubeconfig")
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() > 0 || opts.Namespace == "" {
			return fmt.Errorf("%s: --namespace is required and takes no arguments (got %q)", Command, fs.Args())
		}
		return Run(ctx, opts)
	}
}

// Run works on the phase requests of opts.Namespace until ctx ends.
func Run(ctx context.Context, opts Options) error {
	if opts.ProbeInterval == 0 {
		opts.ProbeInterval = 2 * time.Second
	}
	if opts.Resync == 0 {
		opts.Resync = 10 * time.Minute
	}
	if opts.DialContext == nil {
		opts.DialContext = (&net.Dialer{}).DialContext
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", opts.Kubeconfig)
	if err != nil {
		return err
	}
	cfg.UserAgent = "hcp-fleet-" + Command
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	// Its grant is in this namespace only, and it reads only the phase
	// requests there.
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme,
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{opts.Namespace: {}},
			ByObject: map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {
				Label: labels.SelectorFromSet(labels.Set{LabelPhaseRequest: "true"})}}},
		// One per namespace, several in the local fleet's one process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return err
	}
	r := &reconciler{client: mgr.GetClient(), opts: opts, guests: &guests{path: opts.GuestKubeconfig, dial: opts.DialContext},
		watches: objects.NewWatches()}
	if err := ctrl.NewControllerManagedBy(mgr).Named("extension-connector").
		For(&corev1.ConfigMap{}, withPredicates(requestChanged{})).
		// Changes of what it applied in the hosted cluster (a deletion, a
		// probe that starts failing), as requests of their phase request.
		WatchesRawSource(source.Channel(r.watches.Events, &handler.EnqueueRequestForObject{})).
		Complete(r); err != nil {
		return err
	}
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		r.watches.Start(ctx)
		<-ctx.Done()
		return nil
	})); err != nil {
		return err
	}
	if err := mgr.Start(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

type reconciler struct {
	client  client.Client
	opts    Options
	guests  *guests
	watches *objects.Watches
}

// Reconcile works on one phase request and writes the report.
func (r *reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	cm := &corev1.ConfigMap{}
	if err := r.client.Get(ctx, req.NamespacedName, cm); err != nil {
		if apierrors.IsNotFound(err) {
			r.watches.Ensure(ctx, req.NamespacedName, "", nil) // the engine is done with it
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	rep, again := r.work(ctx, cm)
	rep.RequestHash = Hash(cm.Data[KeyRequest], cm.Data[KeyDelete])
	if err := r.report(ctx, cm, rep); err != nil {
		return reconcile.Result{}, err
	}
	if again {
		return reconcile.Result{RequeueAfter: r.opts.ProbeInterval}, nil
	}
	return reconcile.Result{RequeueAfter: r.opts.Resync}, nil
}

// work applies and deletes what cm asks; again says whether to look again
// soon (an object not available, a deletion not done, a failure).
func (r *reconciler) work(ctx context.Context, cm *corev1.ConfigMap) (Report, bool) {
	var req Request
	if err := json.Unmarshal([]byte(cm.Data[KeyRequest]), &req); err != nil {
		return Report{Reason: extension.ReasonObjectRefused, Message: "the phase request does not parse: " + err.Error()}, false
	}
	var deletes []extension.ObjectRef
	if raw := cm.Data[KeyDelete]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &deletes); err != nil {
			return Report{Reason: extension.ReasonObjectRefused, Message: "the delete list does not parse: " + err.Error()}, false
		}
	}
	// It trusts a request no more than the engine trusts a release.
	if req.Phase.Class != v1alpha1.PhaseClassHostedCluster {
		return Report{Reason: extension.ReasonObjectRefused, Message: fmt.Sprintf("phase %s is not a hosted-cluster phase; the connector runs only those", req.Phase.Name)}, false
	}
	if problems := extension.Validate([]v1alpha1.ExtensionPhase{req.Phase}); len(problems) > 0 {
		return Report{Reason: extension.ReasonObjectRefused, Message: problems[0].Error()}, false
	}
	g, err := r.guests.get()
	if err == nil {
		err = g.reachable()
	}
	if err != nil {
		return Report{Reason: extension.ReasonHostedClusterUnreachable, Message: err.Error()}, true
	}
	var rep Report
	again := false
	// Collision protection for the whole phase before anything of it is
	// applied, as the engine does for control-plane phases.
	var placed []extension.Object
	for _, o := range extension.Plan([]v1alpha1.ExtensionPhase{req.Phase})[0].Objects {
		placed = append(placed, g.place(o))
		rep.Objects = append(rep.Objects, g.claim(ctx, placed[len(placed)-1], &req))
	}
	for i, o := range placed {
		if rep.Objects[i].State == "" {
			rep.Objects[i] = g.apply(ctx, o, &req)
		}
		again = again || rep.Objects[i].State != v1alpha1.ObjectStateAvailable
	}
	r.watch(ctx, cm, g, req.UID, rep.Objects)
	for _, ref := range deletes {
		gone, err := g.remove(ctx, ref, req.UID)
		if err != nil {
			rep.Reason, rep.Message = extension.ReasonApplyFailed, fmt.Sprintf("deleting %s: %v", ref, err)
		}
		if gone {
			rep.Deleted = append(rep.Deleted, ref)
		} else {
			again = true
		}
	}
	return rep, again
}

// watch keeps metadata watches, cluster-wide in the hosted cluster and
// only on objects with the extension's UID label, on the resources of
// what it applied for cm, so that a change there is worked on within
// seconds, not at the next resync.
func (r *reconciler) watch(ctx context.Context, cm *corev1.ConfigMap, g *guest, uid string, applied []ObjectReport) {
	want := map[string]objects.WatchSpec{}
	for _, o := range applied {
		if o.State == v1alpha1.ObjectStateRefused {
			continue
		}
		m, err := g.mapper.RESTMapping(schema.GroupKind{Group: o.Ref.Group, Kind: o.Ref.Kind}, o.Ref.Version)
		if err != nil {
			continue // an unknown kind failed its apply already
		}
		// A new kubeconfig (g.id), new watches.
		want[g.id+"|"+m.Resource.String()] = objects.WatchSpec{Config: g.watchConfig, Resource: m.Resource}
	}
	r.watches.Ensure(ctx, types.NamespacedName{Namespace: cm.Namespace, Name: cm.Name}, uid, want)
}

// report server-side applies the report key when it changed.
func (r *reconciler) report(ctx context.Context, cm *corev1.ConfigMap, rep Report) error {
	text := Marshal(rep)
	if cm.Data[KeyReport] == text {
		return nil
	}
	apply := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": cm.Name, "namespace": cm.Namespace, "uid": string(cm.UID)},
		"data":     map[string]any{KeyReport: text}}}
	err := r.client.Apply(ctx, client.ApplyConfigurationFromUnstructured(apply), client.FieldOwner(FieldManager), client.ForceOwnership)
	return client.IgnoreNotFound(err)
}
