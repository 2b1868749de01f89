//go:build integration

package resilience

import (
	"context"
	"fmt"
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	workv1 "open-cluster-management.io/api/work/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/fleettest"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting/agent/operator"
)

// The agents run in this process: their metrics are read from
// controller-runtime's registry (summed over the three agents; the others
// have nothing to do while a scenario runs).
const (
	operatorWrites     = "hcpfleet_agent_hypershift_operator_apply_writes_total"
	operatorController = "hypershift-operator"
)

// drift: someone edits or deletes what the agent installed; the agent,
// watching what it owns, restores each object with one write.
func drift(t *testing.T, r *row) {
	ctx := context.Background()
	const cluster = "cluster-1"
	spoke := spokes[cluster]
	ext := apiextensionsclient.NewForConfigOrDie(env.Fleet.Cluster(cluster).Config())
	const crd = "awsendpointservices.hypershift.openshift.io"

	writes0 := fleettest.Metric(t, operatorWrites, nil)
	d, err := spoke.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := d.Spec.Template.Spec.Containers[0].Image
	d.Spec.Template.Spec.Containers[0].Image = "example.com/hand-edited:1"
	began := time.Now()
	if _, err := spoke.AppsV1().Deployments(operator.Namespace).Update(ctx, d, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	if err := ext.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, crd, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := spoke.RbacV1().RoleBindings(operator.Namespace).Delete(ctx, "hypershift-operator", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := spoke.RbacV1().Roles(operator.Namespace).Delete(ctx, "hypershift-operator", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	const injected = 4
	eventually(t, time.Minute, "every drifted object restored", func(ctx context.Context) error {
		d, err := spoke.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if img := d.Spec.Template.Spec.Containers[0].Image; img != want {
			return fmt.Errorf("operator image %s", img)
		}
		c, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c.DeletionTimestamp != nil {
			return fmt.Errorf("CRD %s still terminating", crd)
		}
		if _, err := spoke.RbacV1().Roles(operator.Namespace).Get(ctx, "hypershift-operator", metav1.GetOptions{}); err != nil {
			return err
		}
		_, err = spoke.RbacV1().RoleBindings(operator.Namespace).Get(ctx, "hypershift-operator", metav1.GetOptions{})
		return err
	})
	restored := time.Since(began)
	// Each restored object is one write, counted as it is written; a
	// Deployment write that raced the edit may add one.
	var written float64
	eventually(t, 30*time.Second, fmt.Sprintf("%d writes counted", injected), func(context.Context) error {
		if written = fleettest.Metric(t, operatorWrites, nil) - writes0; written < injected {
			return fmt.Errorf("%v writes", written)
		}
		return nil
	})
	if written > injected+1 {
		t.Errorf("%v writes to restore %d objects", written, injected)
	}
	waitHCD(t, time.Minute, "steady", cluster, available)
	r.figure("%d objects restored in %s with %v writes", injected, restored.Round(100*time.Millisecond), written)
}

// agentRestarts: the agent's pod (and the HyperShift operator's) deleted
// again and again. Each new agent reconciles what it installed and writes
// nothing; the hub sees no duplicate and the hosted cluster stays served.
func agentRestarts(t *testing.T, r *row) {
	ctx := context.Background()
	const cluster = "cluster-2"
	const restarts = 3
	spoke := spokes[cluster]
	d0, err := spoke.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	writes0 := fleettest.Metric(t, operatorWrites, nil)
	holder := agentLeaseHolder(t, cluster)
	began := time.Now()
	for i := range restarts {
		reconciles := fleettest.Reconciles(t, operatorController)
		env.Product.RestartAgent(cluster)
		// The positive signal that this agent is back and looked: it holds
		// its leader lease under a new identity and its operator
		// controller finished a reconcile.
		eventually(t, 2*time.Minute, fmt.Sprintf("restart %d: the new agent leads and reconciled", i+1), func(context.Context) error {
			h := agentLeaseHolder(t, cluster)
			if h == "" || h == holder {
				return fmt.Errorf("lease held by %q", h)
			}
			if n := fleettest.Reconciles(t, operatorController); n <= reconciles {
				return fmt.Errorf("no operator reconcile yet")
			}
			holder = h
			return nil
		})
	}
	converged := time.Since(began)
	if w := fleettest.Metric(t, operatorWrites, nil) - writes0; w != 0 {
		t.Errorf("the restarted agents wrote %v objects of the operator install", w)
	}
	d1, err := spoke.AppsV1().Deployments(operator.Namespace).Get(ctx, operator.DeploymentName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d1.Generation != d0.Generation || d1.UID != d0.UID {
		t.Errorf("operator Deployment redeployed: generation %d -> %d, uid %s -> %s", d0.Generation, d1.Generation, d0.UID, d1.UID)
	}
	// Hub objects the agent and the hub keep for this cluster: one
	// placement score, one ManifestWork for the steady hosted cluster.
	var scores clusterv1alpha1.AddOnPlacementScoreList
	if err := hubc.List(ctx, &scores, client.InNamespace(cluster)); err != nil {
		t.Fatal(err)
	}
	if len(scores.Items) != 1 {
		t.Errorf("%d AddOnPlacementScores in %s, want 1", len(scores.Items), cluster)
	}
	var works workv1.ManifestWorkList
	if err := hubc.List(ctx, &works, client.InNamespace(cluster), client.MatchingLabels{hosting.LabelHCDNamespace: "steady", hosting.LabelHCDName: cluster}); err != nil {
		t.Fatal(err)
	}
	if len(works.Items) != 1 {
		t.Errorf("%d ManifestWorks for steady/%s, want 1", len(works.Items), cluster)
	}
	waitHCD(t, time.Minute, "steady", cluster, available)
	r.figure("%d restarts, each back and reconciled in %s on average, 0 writes", restarts, (converged / restarts).Round(100*time.Millisecond))
}

func agentLeaseHolder(t *testing.T, cluster string) string {
	t.Helper()
	h, err := fleettest.AgentLeaseHolder(context.Background(), spokes[cluster])
	if err != nil {
		t.Fatal(err)
	}
	return h
}
