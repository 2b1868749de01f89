package hosting

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	workv1 "open-cluster-management.io/api/work/v1"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
)

// AddHubAPIs adds the APIs an hcp-fleet hub serves to a scheme: Kubernetes'
// own, hcp-fleet's, and OCM's clusters, cluster sets, placements, add-ons and
// ManifestWorks. The hub's controllers, the kubectl plugin and the tests
// that read a hub all build their clients from it.
var AddHubAPIs = hubAPIs.AddToScheme

var hubAPIs = runtime.SchemeBuilder{
	clientgoscheme.AddToScheme,
	v1alpha1.AddToScheme,
	clusterv1.Install,
	clusterv1alpha1.Install,
	clusterv1beta1.Install,
	clusterv1beta2.Install,
	workv1.Install,
	addonv1alpha1.Install,
}
