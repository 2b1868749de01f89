package crds

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/capi/groups"
)

// Mode is the CAPI mode of HostingConfig (api/v1alpha1.CAPIMode has the same
// values, so converting is a plain string conversion).
type Mode string

const (
	// ModeStandard installs and uses the standard `*.cluster.x-k8s.io` CRDs.
	ModeStandard Mode = "Standard"
	// ModePrivate installs `*.cluster.hypershift.openshift.io` copies and runs
	// CAPI clients through the API proxy.
	ModePrivate Mode = "Private"
	// ModeAuto picks Private when someone else owns the standard CRDs,
	// otherwise Standard.
	ModeAuto Mode = "Auto"
)

// Owner describes one CRD on the cluster that is not ours.
type Owner struct {
	// CRD is the CRD name.
	CRD string
	// Owner is a human description of who installed it.
	Owner string
	// Served and Storage are its versions.
	Served  []string
	Storage string
}

// Decision is the outcome of Decide: the mode to run in and why.
type Decision struct {
	// Requested is the HostingConfig mode (empty means Auto).
	Requested Mode
	// Mode is the resolved mode, Standard or Private.
	Mode Mode
	// Reason is one human sentence, reported on the ManagedClusterAddOn.
	Reason string
	// Foreign lists the standard-family CRDs someone else owns; the installer
	// never writes them.
	Foreign []Owner
	// Conflict is true when Standard was requested but the standard CRDs
	// belong to someone else: we use them as they are and install nothing
	// over them.
	Conflict bool
	// Compatible is false when, in a Conflict, the foreign core CRDs do not
	// serve the version our CAPI needs.
	Compatible bool
	// OwnStandard lists standard CRDs that we installed earlier. In Private
	// mode these are what the (future) migration controller moves objects out
	// of before removing them; nothing here deletes them.
	OwnStandard []string
	// OwnPrivate lists private CRDs that we installed earlier.
	OwnPrivate []string
}

// ConditionType is the ManagedClusterAddOn condition the agent reports the
// decision under.
const ConditionType = addon.ConditionCAPITypes

// Condition renders the decision as a status condition.
func (d Decision) Condition(generation int64) metav1.Condition {
	status, reason := metav1.ConditionTrue, string(d.Mode)
	if d.Conflict {
		reason = "StandardOwnedElsewhere"
		if !d.Compatible {
			status, reason = metav1.ConditionFalse, "StandardIncompatible"
		}
	}
	return metav1.Condition{
		Type:               ConditionType,
		Status:             status,
		Reason:             reason,
		Message:            d.Reason,
		ObservedGeneration: generation,
	}
}

// Decide resolves the CAPI mode. It is pure: requested comes from
// HostingConfig, onCluster is every CRD on the cluster (Observe lists them;
// CRDs outside the CAPI families are ignored), coreVersion is the core
// version our CAPI serves (see Options.CoreVersion; empty means the embedded
// storage version).
//
// Rules, following openshift/enhancements#1927 (HyperShift private CAPI types) and its review:
//   - Private when requested, and always once our private CRDs exist (sticky:
//     going back would need a reverse migration that does not exist).
//   - Standard when requested. If someone else owns the standard CRDs we never
//     overwrite them: Conflict is set and we use them as they are (Compatible
//     says whether they serve our version).
//   - Auto: Private when any standard-family CRD belongs to someone else
//     (another owner upgrades on its own schedule even when the version
//     matches today), otherwise Standard.
func Decide(requested Mode, onCluster []apiextensionsv1.CustomResourceDefinition, coreVersion string) Decision {
	if requested == "" {
		requested = ModeAuto
	}
	if coreVersion == "" {
		coreVersion = embeddedCoreVersion()
	}
	d := Decision{Requested: requested, Compatible: true}
	for i := range onCluster {
		crd := &onCluster[i]
		ours := IsOurs(crd)
		switch {
		case groups.IsStandard(crd.Spec.Group):
			if ours {
				d.OwnStandard = append(d.OwnStandard, crd.Name)
			} else {
				d.Foreign = append(d.Foreign, Owner{CRD: crd.Name, Owner: OwnerOf(crd), Served: ServedVersions(crd), Storage: StorageVersion(crd)})
			}
		case groups.IsPrivate(crd.Spec.Group) && ours:
			d.OwnPrivate = append(d.OwnPrivate, crd.Name)
		}
	}
	sort.Strings(d.OwnStandard)
	sort.Strings(d.OwnPrivate)
	sort.Slice(d.Foreign, func(i, j int) bool { return d.Foreign[i].CRD < d.Foreign[j].CRD })

	switch {
	case requested == ModePrivate:
		d.Mode, d.Reason = ModePrivate, "Private: requested by HostingConfig"
		if len(d.Foreign) > 0 {
			d.Reason += "; " + d.foreignSummary()
		}
	case len(d.OwnPrivate) > 0:
		d.Mode = ModePrivate
		d.Reason = fmt.Sprintf("Private: %d private CAPI CRDs already installed by hcp-fleet (a private install stays private)", len(d.OwnPrivate))
		if requested == ModeStandard {
			d.Reason += "; Standard requested but switching back is not supported"
		}
	case requested == ModeStandard && len(d.Foreign) > 0:
		d.Mode, d.Conflict = ModeStandard, true
		d.Compatible = d.foreignCoreServes(coreVersion)
		d.Reason = "Standard requested, but " + d.foreignSummary() + "; leaving them as they are"
		if !d.Compatible {
			d.Reason += fmt.Sprintf(" and they do not serve %s/%s, which HyperShift's CAPI needs: set the CAPI mode to Auto or Private", groups.Standard, coreVersion)
		}
	case requested == ModeStandard:
		d.Mode, d.Reason = ModeStandard, "Standard: requested by HostingConfig"
	case len(d.Foreign) > 0:
		d.Mode, d.Reason = ModePrivate, "Private: "+d.foreignSummary()
	case len(d.OwnStandard) > 0:
		d.Mode, d.Reason = ModeStandard, "Standard: cluster.x-k8s.io CRDs are managed by hcp-fleet"
	default:
		d.Mode, d.Reason = ModeStandard, "Standard: no cluster.x-k8s.io CRDs on the cluster"
	}
	return d
}

// foreignSummary says who owns the foreign CRDs and at which versions, e.g.
// "cluster.x-k8s.io CRDs are owned by clusterctl (cluster-api) at v1beta1".
func (d Decision) foreignSummary() string {
	var owners, versions, grps []string
	for _, f := range d.Foreign {
		if !slices.Contains(owners, f.Owner) {
			owners = append(owners, f.Owner)
		}
		if f.Storage != "" && !slices.Contains(versions, f.Storage) {
			versions = append(versions, f.Storage)
		}
		if i := strings.IndexByte(f.CRD, '.'); i >= 0 && !slices.Contains(grps, f.CRD[i+1:]) {
			grps = append(grps, f.CRD[i+1:])
		}
	}
	sort.Strings(grps)
	s := fmt.Sprintf("%s CRDs are owned by %s", strings.Join(grps, ", "), strings.Join(owners, ", "))
	if len(versions) > 0 {
		s += " at " + strings.Join(versions, ", ")
	}
	return s
}

// foreignCoreServes reports whether every foreign core CRD serves version.
func (d Decision) foreignCoreServes(version string) bool {
	for _, f := range d.Foreign {
		if strings.HasSuffix(f.CRD, "."+groups.Standard) && !slices.Contains(f.Served, version) {
			return false
		}
	}
	return true
}

// IsOurs reports whether we installed a CRD: our managed-by label, or our
// field manager in its managedFields.
func IsOurs(crd metav1.Object) bool {
	if crd.GetLabels()[ManagedByLabel] == ManagedByValue {
		return true
	}
	for _, mf := range crd.GetManagedFields() {
		if mf.Manager == FieldManager {
			return true
		}
	}
	return false
}

// OwnerOf describes who installed a CRD, from the markers the usual
// installers leave; the field managers are the fallback.
func OwnerOf(crd metav1.Object) string {
	labels, ann := crd.GetLabels(), crd.GetAnnotations()
	provider := labels[providerLabel]
	with := func(s string) string {
		if provider != "" {
			return s + " (" + provider + ")"
		}
		return s
	}
	if _, ok := labels["clusterctl.cluster.x-k8s.io"]; ok {
		return with("clusterctl")
	}
	for k := range ann {
		if strings.HasPrefix(k, "include.release.openshift.io/") || strings.HasPrefix(k, "release.openshift.io/") {
			return "the OpenShift release payload"
		}
	}
	if _, ok := labels["backplaneconfig.name"]; ok {
		return "multicluster engine"
	}
	if v := labels[ManagedByLabel]; v != "" {
		return with(v)
	}
	var managers []string
	for _, mf := range crd.GetManagedFields() {
		// Status writers (the apiserver's own CRD controllers) own nothing
		// of the definition.
		if mf.Subresource == "status" {
			continue
		}
		if mf.Manager != "" && !slices.Contains(managers, mf.Manager) {
			managers = append(managers, mf.Manager)
		}
	}
	if len(managers) > 0 {
		sort.Strings(managers)
		return with("field manager " + strings.Join(managers, ", "))
	}
	return with("an unknown owner")
}

func embeddedCoreVersion() string {
	all, err := loaded()
	if err != nil {
		return ""
	}
	for _, crd := range all["core"] {
		if crd.Spec.Group == groups.Standard {
			return StorageVersion(crd)
		}
	}
	return ""
}
