package hypershiftsim

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The stand-in's cluster-version operator, for Upgradeable only, after
// cluster-version-operator's pkg/cvo/upgradeable.go: the ClusterVersion
// "version" is Upgradeable=False while any check fails, and carries no
// Upgradeable condition otherwise. The checks played here:
//
//   - clusterOperatorsUpgradeable: every ClusterOperator with
//     Upgradeable=False; one carries its own reason, and the message
//     "Cluster operator <name> should not be upgraded between minor
//     versions: <its message>"; several give ClusterOperatorsNotUpgradeable;
//   - clusterAdminAcksCompletedUpgradeable: every gate in
//     openshift-config-managed/admin-gates ("ack-<minor>-…": description)
//     whose minor is the current one and whose key the admin has not set
//     to "true" in openshift-config/admin-acks gives AdminAckRequired.
//
// Two failing checks give MultipleReasons. The ClusterOperators are
// written by their operators (the stand-in's olm-operator writes
// operator-lifecycle-manager's; a test may write its own).

const (
	clusterVersionName = "version"
	olmOperatorName    = "operator-lifecycle-manager"
)

// upgradeableCheck is one failing check of the CVO.
type upgradeableCheck struct{ reason, message string }

// cvoUpgradeable aggregates the checks into the ClusterVersion's
// Upgradeable condition; nil when none fails.
func cvoUpgradeable(cos []configv1.ClusterOperator, gates, acks map[string]string, current string) *configv1.ClusterOperatorStatusCondition {
	var checks []upgradeableCheck
	type notUp struct{ name, reason, message string }
	var notup []notUp
	for _, co := range cos {
		for _, c := range co.Status.Conditions {
			if c.Type == configv1.OperatorUpgradeable && c.Status == configv1.ConditionFalse {
				notup = append(notup, notUp{co.Name, c.Reason, c.Message})
			}
		}
	}
	sort.Slice(notup, func(i, j int) bool { return notup[i].name < notup[j].name })
	switch len(notup) {
	case 0:
	case 1:
		checks = append(checks, upgradeableCheck{notup[0].reason, fmt.Sprintf("Cluster operator %s should not be upgraded between minor versions: %s", notup[0].name, notup[0].message)})
	default:
		msgs := make([]string, len(notup))
		for i, n := range notup {
			msgs[i] = fmt.Sprintf("Cluster operator %s should not be upgraded between minor versions: %s: %s", n.name, n.reason, n.message)
		}
		checks = append(checks, upgradeableCheck{"ClusterOperatorsNotUpgradeable", "Multiple cluster operators should not be upgraded between minor versions:\n* " + strings.Join(msgs, "\n* ")})
	}
	if cur, err := semver.ParseTolerant(current); err == nil {
		minor := fmt.Sprintf("%d.%d", cur.Major, cur.Minor)
		var pending []string
		keys := make([]string, 0, len(gates))
		for k := range gates {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !strings.HasPrefix(k, "ack-"+minor+"-") || acks[k] == "true" {
				continue
			}
			pending = append(pending, gates[k])
		}
		if len(pending) > 0 {
			checks = append(checks, upgradeableCheck{"AdminAckRequired", strings.Join(pending, "\n")})
		}
	}
	switch len(checks) {
	case 0:
		return nil
	case 1:
		return &configv1.ClusterOperatorStatusCondition{Type: configv1.OperatorUpgradeable, Status: configv1.ConditionFalse, Reason: checks[0].reason, Message: checks[0].message}
	}
	reasons := make([]string, len(checks))
	msgs := make([]string, len(checks))
	for i, c := range checks {
		reasons[i], msgs[i] = c.reason, c.message
	}
	return &configv1.ClusterOperatorStatusCondition{Type: configv1.OperatorUpgradeable, Status: configv1.ConditionFalse, Reason: "MultipleReasons",
		Message: fmt.Sprintf("Cluster should not be upgraded between minor versions for multiple reasons: %s\n* %s", strings.Join(reasons, ","), strings.Join(msgs, "\n* "))}
}

// setCondition sets c on conds as the library-go helpers do: the
// transition time moves only when the status does. It reports whether
// anything changed; a nil c with remove removes the type.
func setCondition(conds *[]configv1.ClusterOperatorStatusCondition, condType configv1.ClusterStatusConditionType, c *configv1.ClusterOperatorStatusCondition) bool {
	for i := range *conds {
		old := &(*conds)[i]
		if old.Type != condType {
			continue
		}
		if c == nil {
			*conds = append((*conds)[:i], (*conds)[i+1:]...)
			return true
		}
		if old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message {
			return false
		}
		if old.Status != c.Status {
			old.LastTransitionTime = metav1.Now()
		}
		old.Status, old.Reason, old.Message = c.Status, c.Reason, c.Message
		return true
	}
	if c == nil {
		return false
	}
	n := *c
	n.Type, n.LastTransitionTime = condType, metav1.Now()
	*conds = append(*conds, n)
	return true
}

// syncOLMClusterOperator writes the ClusterOperator operator-lifecycle-manager's
// Upgradeable condition, as olm-operator does.
func syncOLMClusterOperator(ctx context.Context, guest client.Client, status, reason, message string) error {
	co := &configv1.ClusterOperator{}
	if err := guest.Get(ctx, client.ObjectKey{Name: olmOperatorName}, co); apierrors.IsNotFound(err) {
		co = &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: olmOperatorName}}
		if err := guest.Create(ctx, co); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	if !setCondition(&co.Status.Conditions, configv1.OperatorUpgradeable,
		&configv1.ClusterOperatorStatusCondition{Status: configv1.ConditionStatus(status), Reason: reason, Message: message}) {
		return nil
	}
	return guest.Status().Update(ctx, co)
}

// syncClusterVersion makes the ClusterVersion "version" say the version
// the hosted cluster targets (status.desired, which OLM reads too) and
// whether it may upgrade, and returns its Upgradeable condition (nil: not
// set, i.e. upgradeable).
func syncClusterVersion(ctx context.Context, guest client.Client, image, version string) (*configv1.ClusterOperatorStatusCondition, error) {
	cv := &configv1.ClusterVersion{}
	if err := guest.Get(ctx, client.ObjectKey{Name: clusterVersionName}, cv); apierrors.IsNotFound(err) {
		cv = &configv1.ClusterVersion{ObjectMeta: metav1.ObjectMeta{Name: clusterVersionName}, Spec: configv1.ClusterVersionSpec{ClusterID: "00000000-0000-0000-0000-000000000000"}}
		if err := guest.Create(ctx, cv); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	var cos configv1.ClusterOperatorList
	if err := guest.List(ctx, &cos); err != nil {
		return nil, err
	}
	gates, acks := configMapData(ctx, guest, "openshift-config-managed", "admin-gates"), configMapData(ctx, guest, "openshift-config", "admin-acks")
	want := cvoUpgradeable(cos.Items, gates, acks, version)
	before := cv.Status.DeepCopy()
	cv.Status.Desired = configv1.Release{Image: image, Version: version}
	setCondition(&cv.Status.Conditions, configv1.OperatorUpgradeable, want)
	if !equality.Semantic.DeepEqual(before, &cv.Status) {
		if err := guest.Status().Update(ctx, cv); err != nil {
			return nil, err
		}
	}
	return want, nil
}

// configMapData is a ConfigMap's data, none when it is missing.
func configMapData(ctx context.Context, guest client.Client, namespace, name string) map[string]string {
	cm := &corev1.ConfigMap{}
	if err := guest.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cm); err != nil {
		return nil
	}
	return cm.Data
}
