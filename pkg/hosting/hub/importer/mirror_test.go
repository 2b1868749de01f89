package importer

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// TestMirrorOwnedByThisDeployment: a mirrored kubeconfig owned by an
// earlier HostedClusterDeployment of the same name (a restored hub's
// deployment has a new UID) is written again, so that the garbage
// collector does not take it; one owned by this one is left alone.
func TestMirrorOwnedByThisDeployment(t *testing.T) {
	scheme := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	hcd := &v1alpha1.HostedClusterDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "c1", UID: "restored"}}
	kubeconfig := []byte("kubeconfig")
	exported := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster-1", Name: hosting.ExportedKubeconfigName("team", "c1")},
		Data: map[string][]byte{hosting.KubeconfigKey: kubeconfig}}
	for _, tc := range []struct {
		owner     string
		wantWrite bool
	}{{"earlier", true}, {"restored", false}} {
		lbls := ownLabels(hcd)
		lbls[hosting.LabelAdminKubeconfig] = "true"
		mirror := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: hosting.AdminKubeconfigName("c1"), Labels: lbls,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "HostedClusterDeployment", Name: "c1", UID: types.UID(tc.owner)}}},
			Data: map[string][]byte{hosting.KubeconfigKey: kubeconfig}}
		writes := 0
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(exported, mirror).WithInterceptorFuncs(interceptor.Funcs{
			Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
				writes++
				return nil
			}}).Build()
		r := &Reconciler{client: c, secrets: c}
		if mirrored, err := r.mirrorKubeconfig(context.Background(), hcd, "cluster-1"); err != nil || !mirrored {
			t.Fatalf("owned by %s: mirrored %v, %v", tc.owner, mirrored, err)
		}
		if (writes > 0) != tc.wantWrite {
			t.Errorf("owned by %s: %d writes, want a write: %v", tc.owner, writes, tc.wantWrite)
		}
	}
}
