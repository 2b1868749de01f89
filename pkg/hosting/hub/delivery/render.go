package delivery

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/scheduling"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/tenancy"
)

// FieldManager is the server-side apply field manager of the delivery's
// fields of HostedClusterDeployment status on the hub, shared with the
// scheduler (hcdstatus.FieldManager).
const FieldManager = hcdstatus.FieldManager

// AnnotationInputHash on a ManifestWork is the hash of what it was rendered
// from; an unchanged hash means no write.
const AnnotationInputHash = "hcpfleet.io/input-hash"

// AnnotationSpecHash on a ManifestWork is the hash of what it was rendered
// from without the referenced objects' versions: equal to the new one, only
// referenced objects changed (coalesce.go).
const AnnotationSpecHash = "hcpfleet.io/spec-hash"

const (
	hyperShiftGroup   = "hypershift.openshift.io"
	hyperShiftVersion = "v1beta1"
)

// Spec is the part of a HostedClusterDeployment the delivery renders, read
// unstructured so fields newer than our HyperShift types pass through.
type Spec struct {
	Namespace string
	Name      string
	// UID is the HostedClusterDeployment's identity UID
	// (hcdstatus.IdentityUID: its metadata.uid, or the one it was first
	// delivered with, which a backup restore keeps); it salts the names of
	// the copies of referenced objects (CopyName), and names the host field
	// manager, hosting.LabelHCDUID and the derived infraID.
	UID              types.UID
	HostingNamespace string
	DeletionPolicy   v1alpha1.DeletionPolicy
	// HostedCluster is spec.hostedCluster: labels, annotations, spec.
	HostedCluster map[string]any
	// NodePools is spec.nodePools.
	NodePools []map[string]any
	// Annotations decides which of spec.hostedCluster's annotations reach
	// the HostedCluster (the zero value: none of a restricted domain).
	Annotations AnnotationPolicy
	// FleetAnnotations are added to the HostedCluster by the fleet admin's
	// policy (the OLM catalogs of the host's HostingConfig, pkg/olm/hub) and
	// by the hub for the agent (the effective OLM Subscription defaults);
	// the HostedClusterDeployment's own annotations of the same keys win.
	FleetAnnotations map[string]string
	// HeldRelease, when set, is the release image the HostedCluster keeps
	// while the hub holds its upgrade (pkg/olm/hub.Decide), and
	// HeldNodePoolReleases the NodePools' (by name) that would otherwise
	// move above its minor.
	HeldRelease          string
	HeldNodePoolReleases map[string]string
	// Forced is what the TenantPolicy of the namespace sets over the
	// tenant's spec, labels and annotations (the admin's values win).
	Forced tenancy.Forced
	// KeptCopies are copies ("Kind/referenced name" → copy name) that the
	// ManifestWork delivers already under a name an older hub chose
	// (LegacyCopyName), kept so that an upgrade of the hub does not rename
	// them: HyperShift refuses to change some references
	// (platform.kubevirt.credentials.infraKubeConfigSecret is immutable),
	// and a renamed pull secret is a change for nothing.
	KeptCopies map[string]string
	// HostFieldManager is the field manager the work agent applies the
	// objects with on the host (ownership.go): HostFieldManager(UID), or the
	// one an existing ManifestWork applies with (KeepDelivered).
	HostFieldManager string
	// AgentNamespace is the management cluster's agent install namespace,
	// where the executor the work agent applies the ManifestWork as lives
	// (addon.ExecutorDelivery; "" stands for addon.DefaultInstallNamespace).
	AgentNamespace string
	// InfraID is the spec.infraID the HostedCluster carries when
	// spec.hostedCluster.spec.infraID is empty: the hub's derived one
	// (scheduling.DeriveInfraID), or the one an existing ManifestWork
	// delivered ("" for one an older hub delivered without: HyperShift then
	// generated it, and only it knows it).
	InfraID string
	// Restored is what a relocation set on the HostedCluster it created on
	// this cluster (pkg/hosting/hub/relocation), kept by every later render
	// (KeepDelivered): the source's clusterID and the etcd snapshot it was
	// restored from. HyperShift refuses a change of either once set, so a
	// render without them would leave the ManifestWork unappliable.
	Restored *Restored
	// Adopted: the HostedClusterDeployment carries
	// hcdstatus.AnnotationAdoptedFrom (a fleet admin adopted a HostedCluster
	// that ran outside hcp-fleet into it; docs/operations.md, "The takeover
	// delivery").
	Adopted bool
	// KeptReferences ("Kind/name") are the references an adopted
	// HostedCluster had (hcdstatus.AnnotationAdoptedReferences): left as
	// they are on the host, neither copied from the hub nor renamed, so
	// that nothing of the running spec changes. Only with Adopted.
	KeptReferences map[string]bool
	// ClusterID is the spec.clusterID an adopted HostedCluster runs with
	// (hcdstatus.AnnotationAdoptedIdentity), set when the spec has none:
	// HyperShift refuses a change of it. Only with Adopted.
	ClusterID string
	// Takeover applies the HostedCluster and NodePools with force, so that
	// the fields another manager (hcp, MCE, an earlier deployment) holds
	// with the values we apply become ours; set until the delivery is
	// first Delivered, after which applies are force-less again.
	Takeover bool
}

// Restored: see Spec.Restored.
type Restored struct {
	ClusterID          string   `json:",omitempty"`
	RestoreSnapshotURL []string `json:",omitempty"`
}

// SpecFrom reads the Spec of an unstructured HostedClusterDeployment.
func SpecFrom(hcd *unstructured.Unstructured) (Spec, error) {
	s := Spec{Namespace: hcd.GetNamespace(), Name: hcd.GetName(), UID: hcdstatus.IdentityUID(hcd)}
	s.HostFieldManager = HostFieldManager(s.UID)
	s.InfraID = scheduling.DeriveInfraID(s.Name, s.UID)
	if _, s.Adopted = hcd.GetAnnotations()[hcdstatus.AnnotationAdoptedFrom]; s.Adopted {
		for _, k := range strings.Split(hcd.GetAnnotations()[hcdstatus.AnnotationAdoptedReferences], ",") {
			if k = strings.TrimSpace(k); k != "" {
				if s.KeptReferences == nil {
					s.KeptReferences = map[string]bool{}
				}
				s.KeptReferences[k] = true
			}
		}
		// Its identity as it runs, not derived.
		infraID, clusterID := hcdstatus.AdoptedIdentity(hcd.GetAnnotations())
		if infraID != "" {
			s.InfraID = infraID
		}
		s.ClusterID = clusterID
	}
	s.HostingNamespace, _, _ = unstructured.NestedString(hcd.Object, "spec", "hostingNamespace")
	if s.HostingNamespace == "" {
		s.HostingNamespace = v1alpha1.DefaultHostingNamespace
	}
	policy, _, _ := unstructured.NestedString(hcd.Object, "spec", "deletionPolicy")
	s.DeletionPolicy = v1alpha1.DeletionPolicy(policy)
	if s.DeletionPolicy == "" {
		s.DeletionPolicy = v1alpha1.DeletionPolicyDelete
	}
	hc, found, err := unstructured.NestedMap(hcd.Object, "spec", "hostedCluster")
	if err != nil || !found {
		return s, fmt.Errorf("spec.hostedCluster: missing or malformed (%v)", err)
	}
	s.HostedCluster = hc
	pools, _, err := unstructured.NestedSlice(hcd.Object, "spec", "nodePools")
	if err != nil {
		return s, fmt.Errorf("spec.nodePools: %w", err)
	}
	for i, p := range pools {
		m, ok := p.(map[string]any)
		if !ok {
			return s, fmt.Errorf("spec.nodePools[%d]: not an object", i)
		}
		s.NodePools = append(s.NodePools, m)
	}
	return s, nil
}

// References lists the Secrets and ConfigMaps the spec refers to, each
// once, that the delivery copies from the hub: all but KeptReferences.
func (s Spec) References() []Reference {
	all := s.allReferences()
	if len(s.KeptReferences) == 0 {
		return all
	}
	var copied []Reference
	for _, r := range all {
		if !s.KeptReferences[r.Kind+"/"+r.Name] {
			copied = append(copied, r)
		}
	}
	return copied
}

// allReferences lists every Secret and ConfigMap the spec refers to, once.
func (s Spec) allReferences() []Reference {
	var refs []Reference
	if spec, ok := s.HostedCluster["spec"].(map[string]any); ok {
		refs = append(refs, references(spec, hostedClusterCopied, "spec.hostedCluster.spec", nil, "")...)
	}
	for i, p := range s.NodePools {
		if spec, ok := p["spec"].(map[string]any); ok {
			refs = append(refs, references(spec, nodePoolCopied, fmt.Sprintf("spec.nodePools[%d].spec", i), nil, "")...)
		}
	}
	return uniqueRefs(refs)
}

// HostedClusterAnnotations are the annotations of spec.hostedCluster the
// HostedCluster carries, and the sorted keys of the ones dropped.
func (s Spec) HostedClusterAnnotations() (copied map[string]string, dropped []string) {
	return s.Annotations.Filter(stringMap(s.HostedCluster["annotations"]))
}

// NodePoolAnnotations are the annotations of spec.nodePools[i] its NodePool
// carries, and the sorted keys of the ones dropped: the HostedCluster's
// policy, as HyperShift reads overrides from NodePool annotations too.
func (s Spec) NodePoolAnnotations(i int) (copied map[string]string, dropped []string) {
	return s.Annotations.Filter(stringMap(s.NodePools[i]["annotations"]))
}

// DroppedAnnotations are the keys of every annotation the policy drops: the
// HostedCluster's as they are, a NodePool's as "<node pool>: <key>".
func (s Spec) DroppedAnnotations() []string {
	_, dropped := s.HostedClusterAnnotations()
	for i, p := range s.NodePools {
		name, _ := p["name"].(string)
		_, npDropped := s.NodePoolAnnotations(i)
		for _, k := range npDropped {
			dropped = append(dropped, name+": "+k)
		}
	}
	return dropped
}

// Labels are the labels pointing back to the HostedClusterDeployment.
func (s Spec) Labels() map[string]string {
	return map[string]string{hosting.LabelHCDNamespace: s.Namespace, hosting.LabelHCDName: s.Name}
}

// WorkLabels are the ManifestWork's: Labels and ACM's backup label, so that
// an ACM backup takes the ManifestWorks and a restore gives the scheduler
// the bindings back (restore.go).
func (s Spec) WorkLabels() map[string]string {
	l := s.Labels()
	l[hosting.LabelBackup] = backupLabelValue
	return l
}

// ObjectLabels are the labels of every object delivered to the host but the
// shared hosting Namespace: Labels and the HostedClusterDeployment's UID,
// which no other HostedClusterDeployment's field manager may change
// (ownership.go).
func (s Spec) ObjectLabels() map[string]string {
	l := s.Labels()
	if s.UID != "" {
		l[hosting.LabelHCDUID] = string(s.UID)
	}
	return l
}

// KeepDelivered keeps what existing, the ManifestWork delivered so far,
// delivered that must not change: its field manager (an older hub's
// ManifestWork applies with the legacy one, which holds the objects'
// fields: see hostFieldManagerFor), its HostedCluster's infraID
// (HyperShift's spec.infraID is immutable once set; one an older hub
// delivered without carries HyperShift's own, which a derived one would
// then conflict with), and the copies an older hub named without the UID
// (KeptCopies). One pass over its manifests. Without existing, s keeps its
// defaults.
func (s *Spec) KeepDelivered(existing *workv1.ManifestWork) {
	s.HostFieldManager = hostFieldManagerFor(existing, s.UID)
	if existing == nil {
		return
	}
	delivered := map[string]bool{}
	for _, m := range existing.Spec.Workload.Manifests {
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				InfraID   string `json:"infraID"`
				ClusterID string `json:"clusterID"`
				Etcd      struct {
					Managed struct {
						Storage struct {
							RestoreSnapshotURL []string `json:"restoreSnapshotURL"`
						} `json:"storage"`
					} `json:"managed"`
				} `json:"etcd"`
			} `json:"spec"`
		}
		if json.Unmarshal(m.Raw, &obj) != nil {
			continue
		}
		delivered[obj.Kind+"/"+obj.Metadata.Name] = true
		if obj.Kind == "HostedCluster" {
			s.InfraID = obj.Spec.InfraID
			if urls := obj.Spec.Etcd.Managed.Storage.RestoreSnapshotURL; len(urls) > 0 {
				s.Restored = &Restored{ClusterID: obj.Spec.ClusterID, RestoreSnapshotURL: urls}
			}
		}
	}
	s.KeptCopies = keptCopies(*s, s.References(), delivered)
}

// Render computes the ManifestWork that delivers s to cluster, with copies
// of the referenced objects (keyed "Kind/name"; every reference must be
// present). Pure: the same input renders the same ManifestWork.
func Render(s Spec, cluster string, referenced map[string]*unstructured.Unstructured, inputHash string) (*workv1.ManifestWork, error) {
	if s.UID == "" {
		// Without it, copy names could be computed by anyone.
		return nil, fmt.Errorf("HostedClusterDeployment %s/%s has no UID", s.Namespace, s.Name)
	}
	labels := s.ObjectLabels()
	manager := s.HostFieldManager
	if manager == "" {
		manager = HostFieldManager(s.UID)
	}
	rename := func(kind, name string) string {
		if s.KeptReferences[kind+"/"+name] {
			return name // an adopted cluster's own, on the host already
		}
		if legacy, ok := s.KeptCopies[kind+"/"+name]; ok {
			return legacy
		}
		return CopyName(s.Namespace, s.Name, s.UID, kind, name)
	}

	ns, nsConfig := hostingNamespace(s)
	manifests := []runtime.Object{ns}
	configs := []workv1.ManifestConfigOption{nsConfig}

	for _, ref := range s.References() {
		obj, ok := referenced[ref.Kind+"/"+ref.Name]
		if !ok {
			return nil, fmt.Errorf("%s %s/%s (%s) is not given", ref.Kind, s.Namespace, ref.Name, ref.Field)
		}
		cp := copyOf(obj, ref.Kind, s.HostingNamespace, rename(ref.Kind, ref.Name), labels)
		manifests = append(manifests, cp)
		resource := "secrets"
		if ref.Kind == KindConfigMap {
			resource = "configmaps"
		}
		configs = append(configs, applyConfig("", resource, s.HostingNamespace, cp.GetName(), manager))
	}

	hc := &unstructured.Unstructured{Object: map[string]any{}}
	hc.SetAPIVersion(hyperShiftGroup + "/" + hyperShiftVersion)
	hc.SetKind("HostedCluster")
	hc.SetNamespace(s.HostingNamespace)
	hc.SetName(s.Name)
	hc.SetLabels(merged(merged(stringMap(s.HostedCluster["labels"]), s.Forced.Labels), labels))
	if a, _ := s.HostedClusterAnnotations(); len(a)+len(s.FleetAnnotations)+len(s.Forced.Annotations) > 0 {
		hc.SetAnnotations(merged(merged(s.FleetAnnotations, a), s.Forced.Annotations))
	}
	spec, _ := runtime.DeepCopyJSONValue(s.HostedCluster["spec"]).(map[string]any)
	if len(s.Forced.HostedClusterSpec) > 0 {
		spec = tenancy.Merge(spec, s.Forced.HostedClusterSpec)
	}
	references(spec, hostedClusterCopied, "", rename, s.HostingNamespace)
	if s.HeldRelease != "" {
		_ = unstructured.SetNestedField(spec, s.HeldRelease, "release", "image")
	}
	if id, _ := spec["infraID"].(string); id == "" && s.InfraID != "" {
		if spec == nil {
			spec = map[string]any{}
		}
		spec["infraID"] = s.InfraID
	}
	if id, _ := spec["clusterID"].(string); id == "" && s.ClusterID != "" {
		if spec == nil {
			spec = map[string]any{}
		}
		spec["clusterID"] = s.ClusterID
	}
	if s.Restored != nil {
		if spec == nil {
			spec = map[string]any{}
		}
		if s.Restored.ClusterID != "" {
			spec["clusterID"] = s.Restored.ClusterID
		}
		urls := make([]any, 0, len(s.Restored.RestoreSnapshotURL))
		for _, u := range s.Restored.RestoreSnapshotURL {
			urls = append(urls, u)
		}
		if err := unstructured.SetNestedSlice(spec, urls, "etcd", "managed", "storage", "restoreSnapshotURL"); err != nil {
			return nil, err
		}
	}
	hc.Object["spec"] = spec
	manifests = append(manifests, hc)
	hcConfig := applyConfig(hyperShiftGroup, "hostedclusters", s.HostingNamespace, s.Name, manager)
	hcConfig.UpdateStrategy.ServerSideApply.Force = s.Takeover
	hcConfig.FeedbackRules = []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JsonPaths: hostedClusterFeedback}}
	hcConfig.FeedbackScrapeType = workv1.FeedbackWatchType
	configs = append(configs, hcConfig)

	for i, p := range s.NodePools {
		name, _ := p["name"].(string)
		np := &unstructured.Unstructured{Object: map[string]any{}}
		np.SetAPIVersion(hyperShiftGroup + "/" + hyperShiftVersion)
		np.SetKind("NodePool")
		np.SetNamespace(s.HostingNamespace)
		np.SetName(name)
		np.SetLabels(merged(stringMap(p["labels"]), labels))
		if a, _ := s.NodePoolAnnotations(i); len(a) > 0 {
			np.SetAnnotations(a)
		}
		spec, _ := runtime.DeepCopyJSONValue(p["spec"]).(map[string]any)
		if len(s.Forced.NodePoolSpec) > 0 {
			spec = tenancy.Merge(spec, s.Forced.NodePoolSpec)
		}
		references(spec, nodePoolCopied, "", rename, s.HostingNamespace)
		if held := s.HeldNodePoolReleases[name]; held != "" {
			_ = unstructured.SetNestedField(spec, held, "release", "image")
		}
		np.Object["spec"] = spec
		manifests = append(manifests, np)
		npConfig := applyConfig(hyperShiftGroup, "nodepools", s.HostingNamespace, name, manager)
		npConfig.UpdateStrategy.ServerSideApply.Force = s.Takeover
		npConfig.FeedbackRules = []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JsonPaths: nodePoolFeedback}}
		npConfig.FeedbackScrapeType = workv1.FeedbackWatchType
		configs = append(configs, npConfig)
	}

	work := &workv1.ManifestWork{
		TypeMeta: metav1.TypeMeta{APIVersion: workv1.GroupVersion.String(), Kind: "ManifestWork"},
		ObjectMeta: metav1.ObjectMeta{
			Name: hosting.WorkName(s.Namespace, s.Name), Namespace: cluster, Labels: s.WorkLabels(),
			Annotations: map[string]string{AnnotationInputHash: inputHash},
		},
		Spec: workv1.ManifestWorkSpec{
			// The work agent applies only what the delivery executor may
			// (docs/security.md, "ManifestWork executors").
			Executor:        addon.WorkExecutor(s.AgentNamespace, addon.ExecutorDelivery),
			DeleteOption:    deleteOption(s),
			ManifestConfigs: configs,
		},
	}
	for _, m := range manifests {
		raw, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		work.Spec.Workload.Manifests = append(work.Spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	return work, nil
}

// hostingNamespace is the hosting Namespace as a ManifestWork carries it:
// created when missing, never updated (other hosted clusters may share it;
// deleteOption orphans it).
func hostingNamespace(s Spec) (*corev1.Namespace, workv1.ManifestConfigOption) {
	ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: s.HostingNamespace, Labels: map[string]string{hosting.LabelCreatedNamespace: "true"}}}
	return ns, workv1.ManifestConfigOption{
		ResourceIdentifier: workv1.ResourceIdentifier{Resource: "namespaces", Name: s.HostingNamespace},
		UpdateStrategy:     &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeCreateOnly},
	}
}

// deleteOption: Delete removes everything but the hosting namespace, which
// other hosted clusters may share (the agent removes it once empty if
// hcp-fleet created it); Orphan leaves everything.
func deleteOption(s Spec) *workv1.DeleteOption {
	if s.DeletionPolicy == v1alpha1.DeletionPolicyOrphan {
		return &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeOrphan}
	}
	return &workv1.DeleteOption{
		PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan,
		SelectivelyOrphan: &workv1.SelectivelyOrphan{OrphaningRules: []workv1.OrphaningRule{
			{Resource: "namespaces", Name: s.HostingNamespace},
		}},
	}
}

// applyConfig applies with server-side apply under the
// HostedClusterDeployment's own field manager (ownership.go), without force: the fields HyperShift's operator defaults or sets are not
// ours and never fought over, and our own fields, which only we set, stay
// ours from one apply to the next, so updates go through. An object someone
// else created and holds fields of with other values (a Secret that happens
// to carry a copy's name, a HostedCluster or NodePool of another owner, a
// field edited on the host) is not taken over: the host's API server refuses
// the apply with a conflict, the work agent reports it on the manifest
// (Applied=False) and Delivered=False (OwnedByAnother) names the object and
// the conflicting fields and manager. The work agent retries on its next
// resync or when the ManifestWork changes.
func applyConfig(group, resource, namespace, name, manager string) workv1.ManifestConfigOption {
	return workv1.ManifestConfigOption{
		ResourceIdentifier: workv1.ResourceIdentifier{Group: group, Resource: resource, Namespace: namespace, Name: name},
		UpdateStrategy: &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeServerSideApply,
			ServerSideApply: &workv1.ServerSideApplyConfig{Force: false, FieldManager: manager}},
	}
}

// copyOf is the delivered copy of a referenced Secret or ConfigMap: its data
// (and type), renamed, in the hosting namespace, with our labels.
func copyOf(obj *unstructured.Unstructured, kind, namespace, name string, labels map[string]string) *unstructured.Unstructured {
	cp := &unstructured.Unstructured{Object: map[string]any{}}
	cp.SetAPIVersion("v1")
	cp.SetKind(kind)
	cp.SetNamespace(namespace)
	cp.SetName(name)
	cp.SetLabels(maps.Clone(labels))
	for _, k := range []string{"type", "data", "stringData", "binaryData", "immutable"} {
		if v, ok := obj.Object[k]; ok {
			cp.Object[k] = runtime.DeepCopyJSONValue(v)
		}
	}
	return cp
}

func stringMap(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

func merged(a, b map[string]string) map[string]string {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, b)
	return out
}

// RenderVersion is part of every input hash. Bump it when Render's output
// changes for the same input (new copy names, apply options, filtering), so
// that every ManifestWork is rendered again once after the hub is upgraded
// instead of keeping what an older hub wrote until its HCD changes.
//
// 5: copy names are salted with the HCD's UID, and the references are the
// ones found in HyperShift's types (etcd's client Secret, the OIDC and
// webhook authenticators' Secrets, the API server's client CA, ingress
// component routes' certificates, OpenStack, PowerVS and IBM Cloud KMS
// credentials are now copied, not passed through to the shared namespace);
// the TenantPolicy's forced fields are merged in; the HostedCluster's
// ClusterVersionUpgradeable is read back; every HostedClusterDeployment has
// its own host field manager, the hcpfleet.io/hcd-uid label and a derived
// infraID (ownership.go).
//
// 6: the ManifestWork names its executor (addon.ExecutorDelivery), so the
// work agent applies it with that identity's grants only.
const RenderVersion = 6

// InputHash hashes what a ManifestWork is rendered from: the renderer's
// version, the spec and the versions of the referenced objects (kind/name →
// resourceVersion), so an unchanged input is recognized without reading the
// objects themselves. The UID counts, as the copies' names depend on it.
// The annotation keys the policy drops count only when there are any, so
// the admin's policy changes the hash only where it changes what reaches
// the host; so do the fleet's annotations, so a HostingConfig change
// rewrites exactly the ManifestWorks it changes.
func InputHash(s Spec, cluster string, refVersions map[string]string) (string, error) {
	dropped := s.DroppedAnnotations()
	b, err := json.Marshal(struct {
		Render             int
		UID                types.UID
		Cluster            string
		HostingNamespace   string
		DeletionPolicy     v1alpha1.DeletionPolicy
		HostedCluster      map[string]any
		NodePools          []map[string]any
		Refs               map[string]string
		DroppedAnnotations []string          `json:",omitempty"`
		FleetAnnotations   map[string]string `json:",omitempty"`
		HeldRelease        string            `json:",omitempty"`
		HeldNodePools      map[string]string `json:",omitempty"`
		Forced             *tenancy.Forced   `json:",omitempty"`
		KeptCopies         map[string]string `json:",omitempty"`
		HostFieldManager   string
		InfraID            string
		Restored           *Restored       `json:",omitempty"`
		KeptReferences     map[string]bool `json:",omitempty"`
		ClusterID          string          `json:",omitempty"`
		Takeover           bool            `json:",omitempty"`
		AgentNamespace     string          `json:",omitempty"`
	}{RenderVersion, s.UID, cluster, s.HostingNamespace, s.DeletionPolicy, s.HostedCluster, s.NodePools, refVersions, dropped,
		s.FleetAnnotations, s.HeldRelease, s.HeldNodePoolReleases, forcedOrNil(s.Forced), s.KeptCopies, s.HostFieldManager, s.InfraID, s.Restored,
		s.KeptReferences, s.ClusterID, s.Takeover, s.AgentNamespace})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16]), nil
}

// forcedOrNil keeps an empty Forced out of the input hash, so that
// ManifestWorks of namespaces whose policy forces nothing keep their hash.
func forcedOrNil(f tenancy.Forced) *tenancy.Forced {
	if f.Empty() {
		return nil
	}
	return &f
}
