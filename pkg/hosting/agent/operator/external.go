package operator

import (
	"context"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon/agent"
)

// The hands-off mode (HostingConfig spec.operator.management: External):
// another manager — the MCE HyperShift add-on (its disableHOManagement
// setting is the same choice seen from the other side), `hypershift
// install`, GitOps — owns the HyperShift operator on this cluster. The agent
// never installs, upgrades or removes it; it reports whether an operator
// runs and is available, so that the hub schedules and delivers hosted
// clusters here only while one does. Unlike ForeignInstall (an operator the
// admin did not mark), the admin said this is intended, so an available
// operator is reported installed.
const (
	// ReasonExternallyManaged: HyperShiftOperatorInstalled=True, another
	// manager's operator runs and is available.
	ReasonExternallyManaged = "ExternallyManaged"
	// ReasonWaitingForExternalOperator: HyperShiftOperatorInstalled=False,
	// no operator runs yet, or it is not available.
	ReasonWaitingForExternalOperator = "WaitingForExternalOperator"
)

// reportExternal reports the operator another manager runs (d, nil when
// none does) without touching it.
func (r *Reconciler) reportExternal(ctx context.Context, hc *agent.HostingConfig, d *appsv1.Deployment) error {
	if d == nil {
		return r.report(ctx, hc, metav1.ConditionFalse, ReasonWaitingForExternalOperator, fmt.Sprintf(
			"HostingConfig %s leaves the HyperShift operator to another manager (spec.operator.management: External) and none runs in namespace %s yet",
			hc.Source, Namespace), nil)
	}
	if msg, ok := externalAvailable(d); !ok {
		return r.report(ctx, hc, metav1.ConditionFalse, ReasonWaitingForExternalOperator, fmt.Sprintf(
			"the HyperShift operator %s that another manager runs in namespace %s (HostingConfig %s, spec.operator.management: External) is not available: %s",
			image(d), Namespace, hc.Source, msg), d)
	}
	return r.report(ctx, hc, metav1.ConditionTrue, ReasonExternallyManaged, fmt.Sprintf(
		"the HyperShift operator %s (version %s) that another manager runs in namespace %s is available; hcp-fleet leaves it alone (HostingConfig %s, spec.operator.management: External)",
		image(d), version(image(d)), Namespace, hc.Source), d)
}

// externalAvailable says whether a Deployment has rolled out and is
// available, and why not.
func externalAvailable(d *appsv1.Deployment) (string, bool) {
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	st := d.Status
	switch {
	case st.ObservedGeneration < d.Generation || st.UpdatedReplicas < replicas:
		return fmt.Sprintf("rolling out, %d/%d replicas updated", st.UpdatedReplicas, replicas), false
	case st.AvailableReplicas < replicas:
		return fmt.Sprintf("%d/%d replicas available%s", st.AvailableReplicas, replicas, deploymentProblem(d)), false
	}
	return "", true
}

// externallyManaged says whether the HostingConfig the hub rendered for this
// cluster leaves the operator to another manager.
func externallyManaged(ctx context.Context, env *agent.Env) (bool, error) {
	hc, err := env.ReadHostingConfig(ctx)
	if err != nil || hc == nil {
		return false, err
	}
	spec := &v1alpha1.HostingConfigSpec{}
	if err := json.Unmarshal(hc.Spec, spec); err != nil {
		return false, fmt.Errorf("HostingConfig %s cannot be read: %w", hc.Source, err)
	}
	return spec.Operator.External(), nil
}
