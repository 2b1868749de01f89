package hypershiftsim

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blang/semver/v4"
	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	registryapi "github.com/operator-framework/operator-registry/pkg/api"
	registrycache "github.com/operator-framework/operator-registry/pkg/cache"
	registryclient "github.com/operator-framework/operator-registry/pkg/client"
	registryserver "github.com/operator-framework/operator-registry/pkg/server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	health "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// The HyperShift stand-in plays, for OLM's default catalogs of a hosted
// cluster whose guest API server it runs (Guests):
//
//   - the control-plane operator: with olmCatalogPlacement management it
//     runs one catalog server per default catalog (HyperShift: an
//     `opm serve` Deployment behind a Service <name>:50051 in the
//     control-plane namespace) — operator-registry's own gRPC registry and
//     health servers, in process, on a loopback port, over the small
//     file-based catalog in testdata/catalog;
//   - the hosted-cluster-config-operator: it writes the CatalogSources
//     into the guest's openshift-marketplace as HCCO does (spec.address
//     <name>:50051 with management placement, spec.image with guest
//     placement);
//   - the guest's catalog-operator: for management placement it
//     health-checks each server with operator-registry's client
//     (pkg/client) and records the gRPC connection state in the
//     CatalogSource's status.connectionState. <name>:50051 does not
//     resolve here, so it dials the loopback address of the server it runs
//     for that catalog of that hosted cluster, and records that address in
//     status.connectionState.address (what it really dialed).
//
// With guest placement OLM in the guest runs the catalog pods, which the
// stand-in plays too, as it does for users' CatalogSources (guestolm.go).
// With spec.configuration.operatorhub.disableAllDefaultSources there are
// no default catalog servers and no default CatalogSources.

// AnnotationCatalogsDown on a HostedCluster (failure injection) names the
// default catalogs (comma-separated) whose servers the stand-in stops, as
// if their Deployments crashed; removing a name starts its server again on
// the same address.
const AnnotationCatalogsDown = "hypershiftsim.hcpfleet.io/catalogs-down"

//go:embed testdata/catalog
var catalogFS embed.FS

// defaultCatalog is one of HCCO's default CatalogSources.
type defaultCatalog struct {
	name, displayName, index string
	priority                 int
}

// defaultCatalogs as HyperShift's HCCO writes them (display name, priority)
// and the index image each has with guest placement.
var defaultCatalogs = []defaultCatalog{
	{"redhat-operators", "Red Hat Operators", "redhat-operator-index", -100},
	{"certified-operators", "Certified Operators", "certified-operator-index", -200},
	{"redhat-marketplace", "Red Hat Marketplace", "redhat-marketplace-index", -300},
	{"community-operators", "Community Operators", "community-operator-index", -400},
}

// catalogPort is where HyperShift's catalog Services listen.
const catalogPort = 50051

// marketplaceNamespace is OLM's namespace of the default catalogs in an
// OpenShift cluster, declared here rather than taken from hcp-fleet's
// pkg/olm: the stand-in follows upstream, not the product.
const marketplaceNamespace = "openshift-marketplace"

// healthTimeout bounds one health check of a catalog server.
const healthTimeout = time.Second

// catalogServers are the catalog servers of one stand-in, by HostedCluster
// UID and catalog name.
type catalogServers struct {
	mu      sync.Mutex
	store   registrycache.Cache // built on first use, shared (read-only)
	dir     string
	servers map[types.UID]map[string]*catalogServer
}

// catalogServer is one catalog's server and the stand-in catalog-operator's
// connection to it.
type catalogServer struct {
	addr   string       // loopback host:port, kept across restarts
	grpc   *grpc.Server // nil while stopped
	client *registryclient.Client
}

func newCatalogServers() *catalogServers {
	return &catalogServers{servers: map[types.UID]map[string]*catalogServer{}}
}

// cache builds the registry cache of testdata/catalog once.
func (s *catalogServers) cache(ctx context.Context) (registrycache.Cache, error) {
	if s.store != nil {
		return s.store, nil
	}
	dir, err := os.MkdirTemp("", "hypershiftsim-catalog-")
	if err != nil {
		return nil, err
	}
	fbc, err := fs.Sub(catalogFS, "testdata/catalog")
	if err != nil {
		return nil, err
	}
	c, err := registrycache.New(dir, registrycache.WithFormat("json"))
	if err == nil {
		err = registrycache.LoadOrRebuild(ctx, c, fbc)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("building the catalog cache: %w", err)
	}
	s.store, s.dir = c, dir
	return c, nil
}

// ensure runs (running) or stops the server of catalog name for hosted
// cluster uid, health-checks it, and returns its address and connection
// state.
func (s *catalogServers) ensure(ctx context.Context, uid types.UID, name string, running bool) (addr, state string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	byName := s.servers[uid]
	if byName == nil {
		byName = map[string]*catalogServer{}
		s.servers[uid] = byName
	}
	cs := byName[name]
	if cs == nil {
		cs = &catalogServer{addr: "127.0.0.1:0"}
		byName[name] = cs
	}
	switch {
	case !running && cs.grpc != nil:
		cs.grpc.Stop()
		cs.grpc = nil
	case running && cs.grpc == nil:
		store, err := s.cache(ctx)
		if err != nil {
			return "", "", err
		}
		lis, err := net.Listen("tcp", cs.addr)
		if err != nil {
			// The old port was taken meanwhile: a new one, and a new client.
			if lis, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
				return "", "", err
			}
		}
		srv := grpc.NewServer()
		registryapi.RegisterRegistryServer(srv, registryserver.NewRegistryServer(store))
		health.RegisterHealthServer(srv, registryserver.NewHealthServer())
		go func() { _ = srv.Serve(lis) }()
		cs.grpc = srv
		if addr := lis.Addr().String(); addr != cs.addr {
			cs.addr = addr
			if cs.client != nil {
				_ = cs.client.Close()
				cs.client = nil
			}
		}
	}
	if cs.client == nil && cs.addr != "127.0.0.1:0" {
		c, err := registryclient.NewClient(cs.addr)
		if err != nil {
			return "", "", err
		}
		cs.client = c
	}
	return cs.addr, cs.state(ctx), nil
}

// state health-checks the server as catalog-operator does and returns the
// connection's gRPC state: READY when it serves, else the state the
// connection is in (TRANSIENT_FAILURE for a server that is gone).
func (cs *catalogServer) state(ctx context.Context) string {
	if cs.client == nil {
		return connectivity.Idle.String()
	}
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	ok, _ := cs.client.HealthCheck(ctx, healthTimeout/4)
	if ok {
		return connectivity.Ready.String()
	}
	// A lost connection leaves the channel IDLE until something uses it:
	// connect, and report where connecting leads (TRANSIENT_FAILURE for a
	// server that is gone), as catalog-operator keeps its connections up.
	conn := cs.client.Conn
	st := conn.GetState()
	if st == connectivity.Idle {
		conn.Connect()
	}
	for st == connectivity.Idle || st == connectivity.Connecting {
		if !conn.WaitForStateChange(ctx, st) {
			break
		}
		st = conn.GetState()
	}
	// Reconnect on the next check instead of after gRPC's backoff (up to
	// two minutes), so a restarted server is seen within a pass.
	conn.ResetConnectBackoff()
	if st == connectivity.Ready {
		return connectivity.TransientFailure.String() // connected, but the check failed
	}
	return st.String()
}

// remove stops the servers of hosted cluster uid.
func (s *catalogServers) remove(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cs := range s.servers[uid] {
		cs.close()
	}
	delete(s.servers, uid)
}

// stop stops every server and drops the cache.
func (s *catalogServers) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, byName := range s.servers {
		for _, cs := range byName {
			cs.close()
		}
	}
	s.servers = map[types.UID]map[string]*catalogServer{}
	if s.store != nil {
		_ = s.store.Close()
		_ = os.RemoveAll(s.dir)
		s.store = nil
	}
}

func (cs *catalogServer) close() {
	if cs.grpc != nil {
		cs.grpc.Stop()
		cs.grpc = nil
	}
	if cs.client != nil {
		_ = cs.client.Close()
		cs.client = nil
	}
}

// Start implements manager.Runnable: the servers stop with the stand-in.
func (s *catalogServers) Start(ctx context.Context) error {
	<-ctx.Done()
	s.stop()
	return nil
}

// catalogsDown are the catalog names AnnotationCatalogsDown lists.
func catalogsDown(annotations map[string]string) []string {
	var out []string
	for _, n := range strings.Split(annotations[AnnotationCatalogsDown], ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// reconcileCatalogs plays HyperShift's control-plane operator, HCCO and
// the guest's catalog-operator for hc's default catalogs (see above).
func (r *hostedClusterReconciler) reconcileCatalogs(ctx context.Context, hc *hyperv1.HostedCluster, cfg *rest.Config) error {
	guest, err := client.New(cfg, client.Options{Scheme: guestScheme})
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: marketplaceNamespace}}
	if err := guest.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s in the guest: %w", marketplaceNamespace, err)
	}
	if c := hc.Spec.Configuration; c != nil && c.OperatorHub != nil && c.OperatorHub.DisableAllDefaultSources {
		// No catalog Deployments (the control-plane operator's predicate),
		// and HCCO deletes the CatalogSources the guest's OperatorHub
		// disables (the stand-in's guests serve no OperatorHub: it reads
		// the HostedCluster's, which HCCO copies there).
		var errs []error
		for _, dc := range defaultCatalogs {
			r.catalogs.drop(hc.UID, dc.name)
			cs := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: marketplaceNamespace, Name: dc.name}}
			if err := guest.Delete(ctx, cs); client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("deleting CatalogSource %s: %w", dc.name, err))
			}
		}
		// Users' own catalogs still serve.
		errs = append(errs, r.guestCatalogOperator(ctx, guest, hc, true, catalogsDown(hc.Annotations)))
		return errors.Join(errs...)
	}
	management := hc.Spec.OLMCatalogPlacement != hyperv1.GuestOLMCatalogPlacement
	down := catalogsDown(hc.Annotations)
	var errs []error
	for _, dc := range defaultCatalogs {
		cs := &operatorsv1alpha1.CatalogSource{ObjectMeta: metav1.ObjectMeta{Namespace: marketplaceNamespace, Name: dc.name}}
		if _, err := controllerutil.CreateOrUpdate(ctx, guest, cs, func() error {
			hccoCatalogSource(cs, dc, management, guestCatalogImage(hc, dc.index))
			return nil
		}); err != nil {
			errs = append(errs, fmt.Errorf("CatalogSource %s: %w", dc.name, err))
			continue
		}
		if !management {
			continue
		}
		addr, state, err := r.catalogs.ensure(ctx, hc.UID, dc.name, !slices.Contains(down, dc.name))
		if err != nil {
			errs = append(errs, fmt.Errorf("catalog server %s: %w", dc.name, err))
			continue
		}
		if c := cs.Status.GRPCConnectionState; c != nil && c.LastObservedState == state && c.Address == addr {
			continue // write nothing when nothing changed
		}
		patch := client.MergeFrom(cs.DeepCopy())
		cs.Status.GRPCConnectionState = &operatorsv1alpha1.GRPCConnectionState{
			Address: addr, LastObservedState: state, LastConnectTime: metav1.Now()}
		if err := guest.Status().Patch(ctx, cs, patch); err != nil {
			errs = append(errs, fmt.Errorf("CatalogSource %s status: %w", dc.name, err))
		}
	}
	errs = append(errs, r.guestCatalogOperator(ctx, guest, hc, management, down))
	return errors.Join(errs...)
}

// drop stops and forgets the server of catalog name of hosted cluster uid.
func (s *catalogServers) drop(uid types.UID, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cs := s.servers[uid][name]; cs != nil {
		cs.close()
		delete(s.servers[uid], name)
	}
}

// hccoCatalogSource sets what HCCO owns of a default CatalogSource
// (hostedclusterconfigoperator resources/olm): the management annotation
// and the whole spec, with the address of the catalog's Service for
// management placement or its index image for guest placement.
func hccoCatalogSource(cs *operatorsv1alpha1.CatalogSource, dc defaultCatalog, management bool, image string) {
	if cs.Annotations == nil {
		cs.Annotations = map[string]string{}
	}
	cs.Annotations["target.workload.openshift.io/management"] = `{"effect": "PreferredDuringScheduling"}`
	cs.Spec = operatorsv1alpha1.CatalogSourceSpec{
		SourceType:  operatorsv1alpha1.SourceTypeGrpc,
		DisplayName: dc.displayName,
		Publisher:   "Red Hat",
		Priority:    dc.priority,
		UpdateStrategy: &operatorsv1alpha1.UpdateStrategy{RegistryPoll: &operatorsv1alpha1.RegistryPoll{
			RawInterval: "10m", Interval: &metav1.Duration{Duration: 10 * time.Minute}}},
	}
	if management {
		cs.Spec.Address = fmt.Sprintf("%s:%d", dc.name, catalogPort)
	} else {
		cs.Spec.Image = image
	}
}

// guestCatalogImage is a default catalog's index image with guest
// placement, as the control-plane operator picks it: the index of the
// hosted cluster's minor in registry.redhat.io/redhat, or in the first
// mirror olm-catalogs-is-registry-overrides gives for it. (HyperShift
// falls back to older minors whose index exists; the stand-in pulls
// nothing and takes the release's.)
func guestCatalogImage(hc *hyperv1.HostedCluster, index string) string {
	registry := "registry.redhat.io/redhat"
	for _, pair := range strings.Split(hc.Annotations[hyperv1.OLMCatalogsISRegistryOverridesAnnotation], ",") {
		if src, dst, ok := strings.Cut(pair, "="); ok && src == registry && dst != "" {
			registry = dst
			break
		}
	}
	minor := ""
	if hc.Status.Version != nil {
		if v, err := semver.ParseTolerant(hc.Status.Version.Desired.Version); err == nil {
			minor = fmt.Sprintf("%d.%d", v.Major, v.Minor)
		}
	}
	return fmt.Sprintf("%s/%s:v%s", registry, index, minor)
}
