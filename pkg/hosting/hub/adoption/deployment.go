package adoption

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/hub/hcdstatus"
)

// RequestOf is the Check request of an adoption in a management cluster's
// namespace.
func RequestOf(hca *v1alpha1.HostedClusterAdoption) Request {
	into := hca.Spec.Into.Name
	if into == "" {
		into = hca.Spec.HostedCluster.Name
	}
	return Request{Cluster: hca.Namespace, Namespace: hca.Spec.HostedCluster.Namespace, Name: hca.Spec.HostedCluster.Name,
		IntoNamespace: hca.Spec.Into.Namespace, IntoName: into}
}

// objectTemplate is what the agent reports of a HyperShift object.
type objectTemplate struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Spec        map[string]any    `json:"spec,omitempty"`
}

func decode(raw runtime.RawExtension, what string) (objectTemplate, error) {
	var o objectTemplate
	if len(raw.Raw) == 0 {
		return o, fmt.Errorf("the agent reported no %s", what)
	}
	if err := json.Unmarshal(raw.Raw, &o); err != nil {
		return o, fmt.Errorf("the agent's report of %s: %w", what, err)
	}
	if o.Spec == nil {
		return o, fmt.Errorf("the agent reported no spec of %s", what)
	}
	return o, nil
}

// template is the HostedClusterDeployment's labels/annotations/spec entry
// for o. hcp-fleet's own labels (hcpfleet.io/hcd-*, left by an earlier
// deployment of an orphan) are dropped: the delivery sets its own.
func (o objectTemplate) template() map[string]any {
	t := map[string]any{"spec": o.Spec}
	labels := map[string]any{}
	for k, v := range o.Labels {
		if !strings.HasPrefix(k, "hcpfleet.io/") {
			labels[k] = v
		}
	}
	if len(labels) > 0 {
		t["labels"] = labels
	}
	if len(o.Annotations) > 0 {
		annotations := map[string]any{}
		for k, v := range o.Annotations {
			annotations[k] = v
		}
		t["annotations"] = annotations
	}
	return t
}

// Deployment is the HostedClusterDeployment an adoption creates from the
// agent's report (docs/operations.md, "What the hub checks, then does"):
// the HostedCluster's and its NodePools' labels, annotations and specs as
// they run (its infraID and clusterID kept, never derived, in
// hcdstatus.AnnotationAdoptedIdentity), bound by annotation to
// where it runs, its hosting namespace the HostedCluster's, the request's
// deletionPolicy. Annotations of the deployment: AnnotationAdoptedFrom,
// and AnnotationAdoptedReferences once the caller knows which references
// to keep (SetKeptReferences). Unstructured, so that fields newer than the
// pinned HyperShift types pass through. Pure.
func Deployment(hca *v1alpha1.HostedClusterAdoption) (*unstructured.Unstructured, error) {
	o := hca.Status.Observed
	if o == nil {
		return nil, fmt.Errorf("the agent has not answered")
	}
	req := RequestOf(hca)
	hc, err := decode(o.HostedCluster, "the HostedCluster")
	if err != nil {
		return nil, err
	}
	var pools []any
	for _, np := range o.NodePools {
		t, err := decode(np.Object, "NodePool "+np.Name)
		if err != nil {
			return nil, err
		}
		p := t.template()
		p["name"] = np.Name
		pools = append(pools, p)
	}
	// The identity it runs with goes in an annotation the hub sets, not in
	// the spec, where the TenantPolicy refuses a tenant's (its value is not
	// the tenant's choice); the delivery sets it on the HostedCluster as it
	// is.
	infraID, _ := hc.Spec["infraID"].(string)
	clusterID, _ := hc.Spec["clusterID"].(string)
	delete(hc.Spec, "infraID")
	delete(hc.Spec, "clusterID")
	identity := "infraID=" + infraID
	if clusterID != "" {
		identity += ",clusterID=" + clusterID
	}
	policy := hca.Spec.DeletionPolicy
	if policy == "" {
		policy = v1alpha1.DeletionPolicyOrphan
	}
	spec := map[string]any{
		"hostingCluster":   req.Cluster,
		"hostingNamespace": req.Namespace,
		"hostedCluster":    hc.template(),
		"deletionPolicy":   string(policy),
	}
	if len(pools) > 0 {
		spec["nodePools"] = pools
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("HostedClusterDeployment"))
	u.SetNamespace(req.IntoNamespace)
	u.SetName(req.IntoName)
	u.SetAnnotations(map[string]string{AnnotationAdoptedFrom: req.Cluster + "/" + req.Namespace + "/" + req.Name,
		hcdstatus.AnnotationAdoptedIdentity: identity})
	u.SetLabels(map[string]string{"app.kubernetes.io/managed-by": "hcp-fleet"})
	return u, nil
}

// SetKeptReferences records on u the references ("Kind/name") the
// delivery keeps as they are on the management cluster.
func SetKeptReferences(u *unstructured.Unstructured, refs []string) {
	if len(refs) == 0 {
		return
	}
	sorted := append([]string(nil), refs...)
	sort.Strings(sorted)
	a := u.GetAnnotations()
	a[hcdstatus.AnnotationAdoptedReferences] = strings.Join(sorted, ",")
	u.SetAnnotations(a)
}

// Reasons of the Adopted condition besides Check's.
const (
	// ReasonWaitingForAgent: the management cluster's agent has not
	// answered yet.
	ReasonWaitingForAgent = "WaitingForAgent"
	// ReasonNotObserved: the agent answered that it cannot report the
	// HostedCluster (its Observed condition says why).
	ReasonNotObserved = "NotObserved"
	// ReasonHostedClusterChanged: the HostedCluster is being deleted, or it
	// is not the one adopted any more (another UID).
	ReasonHostedClusterChanged = "HostedClusterChanged"
	// ReasonPolicyViolation: the TenantPolicy of the target namespace
	// refuses the HostedCluster's spec; nothing was created or written.
	ReasonPolicyViolation = v1alpha1.ReasonPolicyViolation
	// ReasonInvalidSpec: the agent's report does not make a valid
	// HostedClusterDeployment (the API server refused it).
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonTakingOver: the deployment exists; the hub binds and delivers
	// it (the deployment's conditions say how far).
	ReasonTakingOver = "TakingOver"
	// ReasonDeploymentGone: the deployment the adoption created was
	// deleted, or is not the adopted one any more.
	ReasonDeploymentGone = "DeploymentGone"
	// ReasonAdopted: the deployment delivers the HostedCluster the agent
	// observed, same UID.
	ReasonAdopted = v1alpha1.ReasonAdopted
)

// TakeoverCondition is the Adopted condition of an adoption whose
// deployment hcd exists: True once hcd is Delivered and the agent reports
// the adopted HostedCluster (same UID) labelled with hcd's UID in its
// inventory; else why not yet. Pure.
func TakeoverCondition(hca *v1alpha1.HostedClusterAdoption, hcd *v1alpha1.HostedClusterDeployment, inventory *v1alpha1.HostedClusterInventory) metav1.Condition {
	c := metav1.Condition{Type: v1alpha1.ConditionAdopted, Status: metav1.ConditionFalse}
	name := hcd.Namespace + "/" + hcd.Name
	cluster, _, _, ok := hcdstatus.AdoptedFrom(hcd)
	if !ok || cluster != hca.Namespace {
		c.Reason, c.Message = ReasonDeploymentGone, fmt.Sprintf("HostedClusterDeployment %s is not the one this adoption created", name)
		return c
	}
	o := hca.Status.Observed
	if o == nil || o.UID != hca.Status.AdoptedUID || o.Deleting {
		c.Reason = ReasonHostedClusterChanged
		c.Message = fmt.Sprintf("the agent does not report HostedCluster %s/%s with the adopted UID %s any more (deleted or replaced)",
			hca.Spec.HostedCluster.Namespace, hca.Spec.HostedCluster.Name, hca.Status.AdoptedUID)
		return c
	}
	for _, t := range []string{v1alpha1.ConditionScheduled, v1alpha1.ConditionDelivered} {
		dc := findCondition(hcd.Status.Conditions, t)
		if dc == nil || dc.Status != metav1.ConditionTrue {
			c.Reason = ReasonTakingOver
			if dc != nil && dc.Reason == v1alpha1.ReasonPolicyViolation {
				c.Reason = ReasonPolicyViolation
			}
			c.Message = fmt.Sprintf("HostedClusterDeployment %s is not %s yet", name, t)
			if dc != nil {
				c.Message = fmt.Sprintf("HostedClusterDeployment %s: %s=%s (%s): %s", name, t, dc.Status, dc.Reason, dc.Message)
			}
			return c
		}
	}
	if !labelledBy(inventory, hca.Spec.HostedCluster, hcd) {
		c.Reason = ReasonTakingOver
		c.Message = fmt.Sprintf("HostedClusterDeployment %s is Delivered; waiting for the agent to report HostedCluster %s/%s labelled as delivered by it",
			name, hca.Spec.HostedCluster.Namespace, hca.Spec.HostedCluster.Name)
		return c
	}
	c.Status, c.Reason = metav1.ConditionTrue, ReasonAdopted
	c.Message = fmt.Sprintf("HostedCluster %s/%s (UID %s) is delivered by HostedClusterDeployment %s", hca.Spec.HostedCluster.Namespace,
		hca.Spec.HostedCluster.Name, hca.Status.AdoptedUID, name)
	return c
}

func labelledBy(inv *v1alpha1.HostedClusterInventory, hc v1alpha1.AdoptionHostedCluster, hcd *v1alpha1.HostedClusterDeployment) bool {
	if inv == nil {
		return false
	}
	e := entry(inv, hc.Namespace, hc.Name)
	return e != nil && e.Deployment != nil && e.Deployment.Namespace == hcd.Namespace && e.Deployment.Name == hcd.Name &&
		e.Deployment.UID == string(hcdstatus.IdentityUID(hcd))
}

func findCondition(conds []metav1.Condition, t string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}
