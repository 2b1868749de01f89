package hub

import (
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/extension"
	extensionhub "github.com/hcp-fleet/hcp-fleet/pkg/extension/hub"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/adoption"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/delivery"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/exportaccess"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/fleetmetrics"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hostmodel"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hubindex"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/importer"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/releaserollout"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/relocation"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
)

// Scheme holds every API the hub controllers read or write.
var Scheme = runtime.NewScheme()

func init() { utilruntime.Must(hosting.AddHubAPIs(Scheme)) }

// setupControllers registers the hub's HostedClusterDeployment controllers
// with the manager; they run on the leader only.
func setupControllers(mgr ctrl.Manager, opts *Options) error {
	if err := SetupScheduleAndDeliver(mgr, opts); err != nil {
		return err
	}
	policy, err := importer.ParseLabelPolicy(opts.ImportedClusterLabels)
	if err != nil {
		return err
	}
	addons, err := importer.ParseKlusterletAddons(opts.KlusterletAddons)
	if err != nil {
		return err
	}
	if err := importer.Setup(mgr, importer.Options{Labels: policy, NamePrefix: opts.ImportedClusterNamePrefix,
		Disabled: !opts.ImportHostedClusters, ConfigNamespaces: opts.configNamespaces(), KlusterletAddons: addons}); err != nil {
		return err
	}
	if err := fleetmetrics.Setup(mgr, opts.configNamespaces()); err != nil {
		return err
	}
	if err := extensionhub.Setup(mgr); err != nil {
		return err
	}
	if err := releaserollout.Setup(mgr); err != nil {
		return err
	}
	strategy, err := scheduling.ParseStrategy(opts.SchedulingStrategy)
	if err != nil {
		return err
	}
	if err := relocation.Setup(mgr, relocation.Options{MaxActive: opts.RelocationConcurrency, Timeout: opts.RelocationTimeout, PauseTimeout: opts.RelocationPauseTimeout,
		Strategy: strategy, ConfigNamespaces: opts.configNamespaces(), UnavailableGrace: opts.HostUnavailableGrace}); err != nil {
		return err
	}
	if err := adoption.Setup(mgr, adoption.Options{ConfigNamespaces: opts.configNamespaces()}); err != nil {
		return err
	}
	return exportaccess.Setup(mgr)
}

// SetupScheduleAndDeliver registers the field indexes, the scheduler and the
// delivery as the hub runs them; the hub-only benchmark runs exactly this.
func SetupScheduleAndDeliver(mgr ctrl.Manager, opts *Options) error {
	strategy, err := scheduling.ParseStrategy(opts.SchedulingStrategy)
	if err != nil {
		return err
	}
	// The shared indexes serve the controllers setupControllers adds after
	// these two as well.
	if err := hubindex.AddIndexes(mgr); err != nil {
		return err
	}
	if err := scheduling.AddIndexes(mgr); err != nil {
		return err
	}
	configNamespaces := opts.configNamespaces()
	// A binding is written with the delivery's first status (one status
	// write instead of two per hosted cluster).
	if err := scheduling.Setup(mgr, scheduling.Options{Strategy: strategy, ConfigNamespaces: configNamespaces,
		BindingStatus: delivery.BindingStatus(mgr.GetClient(), opts.HostUnavailableGrace), Workers: opts.SchedulerWorkers,
		UnknownReferences: delivery.UnknownReferencesOf, UnavailableGrace: opts.HostUnavailableGrace}); err != nil {
		return err
	}
	annotations, err := delivery.ParseAnnotationPolicy(opts.HostedClusterAnnotations)
	if err != nil {
		return err
	}
	if err := delivery.Setup(mgr, delivery.Options{LostHostTimeout: opts.LostHostTimeout, Annotations: annotations, ConfigNamespaces: configNamespaces,
		MaxConcurrentReconciles: opts.DeliveryWorkers, RefreshInterval: opts.ReferenceRefreshInterval,
		UnavailableGrace: opts.HostUnavailableGrace, UpgradeReportMaxAge: opts.UpgradeReportMaxAge}); err != nil {
		return err
	}
	return nil
}

// configNamespaces are the namespaces the add-on's render takes
// HostingConfigs from, which the scheduler, the delivery and the fleet
// metrics read them from too.
func (o *Options) configNamespaces() hostmodel.ConfigNamespaces {
	return hostmodel.ConfigNamespaces{Hub: o.Namespace, Allowed: o.hostingConfigNamespaces()}
}

// CacheOptions are the hub manager's cache options (what its controllers
// read, and no more), for programs that run the hub's controllers.
func CacheOptions() cache.Options { return cacheOptions() }

// cacheOptions keep the hub's caches to what its controllers read.
func cacheOptions() cache.Options {
	ours, _ := labels.NewRequirement(hosting.LabelHCDName, selection.Exists, nil)
	extensionRevisions, _ := labels.NewRequirement(extension.LabelExtension, selection.Exists, nil)
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		// Only the ManifestWorks that deliver hosted clusters and their
		// extensions.
		&workv1.ManifestWork{}: {Label: labels.NewSelector().Add(*ours)},
		// Only the extensions' revisions, not every StatefulSet's and
		// DaemonSet's history.
		&appsv1.ControllerRevision{}: {Label: labels.NewSelector().Add(*extensionRevisions)},
		// Only hcp-fleet's add-ons.
		&addonv1alpha1.ManagedClusterAddOn{}: {Field: fields.OneTermEqualSelector("metadata.name", addon.Name)},
		// Only the agents' export grants (the hub may list and watch
		// these names only).
		&rbacv1.Role{}:        {Field: fields.OneTermEqualSelector("metadata.name", exportaccess.RoleName)},
		&rbacv1.RoleBinding{}: {Field: fields.OneTermEqualSelector("metadata.name", exportaccess.RoleName)},
	}}
}
