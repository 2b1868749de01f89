//go:build integration

package v1alpha1_test

import (
	"context"
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestCRDSize keeps the HostedClusterDeployment CRD, which embeds HyperShift's large
// schemas, well below etcd's 1.5 MiB request limit as the apiserver stores it after a
// server-side apply (managedFields included), so a HyperShift bump that grows it
// noticeably is caught here rather than by a failing install.
func TestCRDSize(t *testing.T) {
	const limit = 1 << 20 // 1 MiB: leaves a third of etcd's limit as headroom
	for _, name := range []string{"hostedclusterdeployments.hcpfleet.io", "hostingconfigs.hcpfleet.io"} {
		crd := &unstructured.Unstructured{}
		crd.SetAPIVersion("apiextensions.k8s.io/v1")
		crd.SetKind("CustomResourceDefinition")
		if err := k8s.Get(context.Background(), client.ObjectKey{Name: name}, crd); err != nil {
			t.Fatal(err)
		}
		if len(crd.GetManagedFields()) == 0 {
			t.Errorf("%s has no managedFields; was it installed by server-side apply?", name)
		}
		raw, err := json.Marshal(crd.Object)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes as stored", name, len(raw))
		if len(raw) > limit {
			t.Errorf("%s is %d bytes as stored, over the %d byte budget", name, len(raw), limit)
		}
	}
}
