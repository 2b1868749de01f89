//go:build integration

package hub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"open-cluster-management.io/addon-framework/pkg/agent"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// TestExportAccess: an agent may write, on the hub, exactly the exported
// admin kubeconfigs of the HostedClusterDeployments bound to its cluster, by
// name — never list its cluster namespace's Secrets, read another name, or
// reach another cluster's namespace — and loses the grant with the HCD,
// whose export the hub deletes.
func TestExportAccess(t *testing.T) {
	ctx := context.Background()
	ns := "exports"
	tenant(t, ns)
	if err := hubc.Create(ctx, hcd(ns, "exp-a")); err != nil {
		t.Fatal(err)
	}
	host := waitCondition(t, ns, "exp-a", v1alpha1.ConditionDelivered, metav1.ConditionTrue, time.Minute).Status.HostingCluster
	var other string
	for _, m := range env.Fleet.Managed {
		if m.Name != host {
			other = m.Name
		}
	}
	export := types.NamespacedName{Namespace: host, Name: hosting.ExportedKubeconfigName(ns, "exp-a")}
	// The positive signal: the agent, with no other right to Secrets on the
	// hub, exported the kubeconfig.
	env.Eventually(t, 2*time.Minute, "the agent exports the admin kubeconfig to "+export.String(), func(ctx context.Context) error {
		s := &corev1.Secret{}
		if err := hubc.Get(ctx, export, s); err != nil {
			return err
		}
		if len(s.Data[hosting.KubeconfigKey]) == 0 {
			return fmt.Errorf("no %s key", hosting.KubeconfigKey)
		}
		return nil
	})
	for _, c := range []struct {
		verb, namespace, name string
		want                  bool
	}{
		{"get", host, export.Name, true},
		{"patch", host, export.Name, true},
		{"create", host, export.Name, true},
		{"delete", host, export.Name, true},
		{"update", host, export.Name, false},
		{"get", host, "probe-foreign-name", false},
		{"get", host, "", false},
		{"list", host, "", false},
		{"watch", host, "", false},
		{"get", other, export.Name, false},
	} {
		if got := agentMay(t, host, c.verb, c.namespace, c.name); got != c.want {
			t.Errorf("agent of %s: %s Secret %s/%s allowed=%v, want %v", host, c.verb, c.namespace, c.name, got, c.want)
		}
	}

	if err := hubc.Delete(ctx, hcd(ns, "exp-a")); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, 2*time.Minute, "the export and the agent's grant gone with the HCD", func(ctx context.Context) error {
		if _, err := getHCD(ctx, ns, "exp-a"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("HCD still there (%v)", err)
		}
		if err := hubc.Get(ctx, export, &corev1.Secret{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("export still there (%v)", err)
		}
		if agentMay(t, host, "get", host, export.Name) {
			return fmt.Errorf("the agent may still read %s", export)
		}
		return nil
	})
}

// agentMay asks the hub whether cluster's agent may do verb on the Secret.
func agentMay(t *testing.T, cluster, verb, namespace, name string) bool {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               agent.DefaultUser(cluster, addon.Name, addon.AgentName),
		Groups:             append(agent.DefaultGroups(cluster, addon.Name), "system:authenticated"),
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Resource: "secrets", Namespace: namespace, Name: name},
	}}
	if err := hubc.Create(context.Background(), sar); err != nil {
		t.Fatal(err)
	}
	return sar.Status.Allowed
}
