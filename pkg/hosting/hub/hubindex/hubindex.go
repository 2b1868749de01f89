package hubindex

import (
	"context"

	workv1 "open-cluster-management.io/api/work/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/pkg/hosting"
)

// HostingCluster indexes HostedClusterDeployments by status.hostingCluster,
// the management cluster's name ("" for unscheduled ones).
const HostingCluster = "status.hostingCluster"

// WorkHCD indexes the hub's ManifestWorks by the HostedClusterDeployment
// they name in their labels (WorkHCDKey): the scheduler looks every unbound
// HostedClusterDeployment's up before deciding, and a label selector on the
// cache would go through every ManifestWork each time.
const WorkHCD = "hcpfleet.io/work-hcd"

// WorkHCDKey is the WorkHCD key of the HostedClusterDeployment
// namespace/name.
func WorkHCDKey(namespace, name string) string { return namespace + "/" + name }

// Index is one field index of the hub's cache.
type Index struct {
	Object  client.Object
	Field   string
	Extract client.IndexerFunc
}

// Indexes are the shared indexes: what AddIndexes registers, and what a
// unit test gives its fake client (fake.ClientBuilder.WithIndex).
func Indexes() []Index {
	return []Index{
		{&v1alpha1.HostedClusterDeployment{}, HostingCluster, hostingCluster},
		{&workv1.ManifestWork{}, WorkHCD, workHCD},
	}
}

// AddIndexes registers the shared indexes with mgr's cache. Call it once,
// before the Setup of the controllers that read them.
func AddIndexes(mgr ctrl.Manager) error {
	for _, ix := range Indexes() {
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), ix.Object, ix.Field, ix.Extract); err != nil {
			return err
		}
	}
	return nil
}

func hostingCluster(o client.Object) []string {
	return []string{o.(*v1alpha1.HostedClusterDeployment).Status.HostingCluster}
}

// workHCD keys a ManifestWork labelled with both halves of a
// HostedClusterDeployment's name; other works are not indexed.
func workHCD(o client.Object) []string {
	l := o.GetLabels()
	if l[hosting.LabelHCDNamespace] == "" || l[hosting.LabelHCDName] == "" {
		return nil
	}
	return []string{WorkHCDKey(l[hosting.LabelHCDNamespace], l[hosting.LabelHCDName])}
}
