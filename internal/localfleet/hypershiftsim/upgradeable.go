package hypershiftsim

import (
	"context"
	"errors"
	"fmt"

	"github.com/blang/semver/v4"
	configv1 "github.com/openshift/api/config/v1"
	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Guests is implemented by ControlPlanes that run real guest API servers:
// the stand-in then plays, in each guest, the olm-operator and the
// cluster-version operator for upgrades (olmrule.go, cvo.go), and the
// HyperShift operator's copy of the guest ClusterVersion's Upgradeable
// into the HostedCluster's ClusterVersionUpgradeable.
type Guests interface {
	// GuestConfig is the admin config of hc's running guest API server.
	GuestConfig(hc *hyperv1.HostedCluster) (*rest.Config, bool)
}

// ReasonIncompatibleOperatorsInstalled is olm-operator's reason on the
// guest ClusterOperator operator-lifecycle-manager's Upgradeable=False,
// which the cluster-version operator, and from it the HostedCluster's
// ClusterVersionUpgradeable, carry.
const ReasonIncompatibleOperatorsInstalled = "IncompatibleOperatorsInstalled"

var guestScheme = runtime.NewScheme()

func init() {
	// OLM's and OpenShift's config types and the built-in ones (the
	// guest's namespaces and ConfigMaps).
	utilruntime.Must(clientgoscheme.AddToScheme(guestScheme))
	utilruntime.Must(operatorsv1alpha1.AddToScheme(guestScheme))
	utilruntime.Must(configv1.AddToScheme(guestScheme))
}

// clusterVersionUpgradeable plays the guest's olm-operator and CVO, then
// returns the HostedCluster's ClusterVersionUpgradeable as HyperShift
// copies it from the guest ClusterVersion: its Upgradeable condition, or
// True (AsExpected) when the CVO sets none. nil when the stand-in has no
// guest to read, or the guest does not serve what it needs (it is left
// as it was).
func (r *hostedClusterReconciler) clusterVersionUpgradeable(ctx context.Context, hc *hyperv1.HostedCluster) *metav1.Condition {
	guests, ok := r.opts.ControlPlanes.(Guests)
	if !ok || hc.Status.Version == nil || hc.Status.Version.Desired.Version == "" {
		return nil
	}
	cfg, ok := guests.GuestConfig(hc)
	if !ok {
		return nil
	}
	c, err := client.New(cfg, client.Options{Scheme: guestScheme})
	if err != nil {
		return nil
	}
	current := hc.Status.Version.Desired.Version
	var csvs operatorsv1alpha1.ClusterServiceVersionList
	if err := c.List(ctx, &csvs); err != nil {
		return nil
	}
	skews, err := incompatibleOperators(csvs.Items, current)
	if err != nil {
		return nil
	}
	status, reason, message := olmUpgradeable(skews, current)
	log := ctrl.LoggerFrom(ctx)
	if err := syncOLMClusterOperator(ctx, c, status, reason, message); err != nil {
		log.Error(err, "guest ClusterOperator "+olmOperatorName)
		return nil
	}
	cv, err := syncClusterVersion(ctx, c, hc.Status.Version.Desired.Image, current)
	if err != nil {
		log.Error(err, "guest ClusterVersion")
		return nil
	}
	return hostedClusterUpgradeable(cv, hc.Generation)
}

// hostedClusterUpgradeable is HyperShift's copy of the guest
// ClusterVersion's Upgradeable (cv, nil when unset) onto the HostedCluster.
func hostedClusterUpgradeable(cv *configv1.ClusterOperatorStatusCondition, generation int64) *metav1.Condition {
	c := &metav1.Condition{Type: string(hyperv1.ClusterVersionUpgradeable), Status: metav1.ConditionTrue,
		Reason: hyperv1.AsExpectedReason, Message: "The hosted cluster is upgradable", ObservedGeneration: generation}
	if cv != nil {
		c.Status, c.Reason, c.Message = metav1.ConditionStatus(cv.Status), cv.Reason, cv.Message
		if c.Reason == "" {
			c.Reason = hyperv1.AsExpectedReason
		}
	}
	return c
}

// errNotUpgradeable is the HyperShift operator's refusal.
var errNotUpgradeable = errors.New("cluster version is not upgradeable")

// upgradeBlocked is the HyperShift operator's rule (hostedcluster
// controller, isUpgradeable): a requested release other than the one the
// hosted cluster targets now, while ClusterVersionUpgradeable is False, is
// refused — and with it the rest of the HostedCluster's reconcile — unless
// hypershift.openshift.io/force-upgrade-to names exactly that release,
// spec.controlPlaneRelease is set, or it stays within the minor (a
// z-stream). A force-upgrade-to naming another release refuses too.
func upgradeBlocked(hc *hyperv1.HostedCluster) error {
	if hc.Status.Version == nil || hc.Status.Version.Desired.Image == hc.Spec.Release.Image {
		return nil
	}
	upgradeable := meta.FindStatusCondition(hc.Status.Conditions, string(hyperv1.ClusterVersionUpgradeable))
	if upgradeable == nil || upgradeable.Status == metav1.ConditionTrue {
		return nil
	}
	if forced, ok := hc.Annotations[hyperv1.ForceUpgradeToAnnotation]; ok {
		if forced != hc.Spec.Release.Image {
			return errors.New("force upgrade annotation is present but does not match desired release image")
		}
		return nil
	}
	if hc.Spec.ControlPlaneRelease != nil {
		return nil
	}
	current, err := semver.Parse(hc.Status.Version.Desired.Version)
	if err != nil {
		return fmt.Errorf("cluster is %s=%s, and its current target %q is not a version: %w", upgradeable.Type, upgradeable.Status, hc.Status.Version.Desired.Version, err)
	}
	requested, invalid := releaseVersion(hc.Spec.Release.Image)
	if invalid != nil {
		return invalid
	}
	v, err := semver.Parse(requested)
	if err != nil {
		return err
	}
	if v.Major == current.Major && v.Minor == current.Minor {
		return nil
	}
	return errNotUpgradeable
}
