package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

const (
	// GroupName is the API group of all hcp-fleet hub resources.
	GroupName = "hcpfleet.io"
	// Version is the API version of this package.
	Version = "v1alpha1"

	// HostedClusterDeploymentKind is the kind of HostedClusterDeployment objects.
	HostedClusterDeploymentKind = "HostedClusterDeployment"
	// HostedClusterDeploymentResource is the plural resource name of HostedClusterDeployments.
	HostedClusterDeploymentResource = "hostedclusterdeployments"

	// HostingConfigKind is the kind of HostingConfig objects.
	HostingConfigKind = "HostingConfig"
	// HostingConfigResource is the plural resource name of HostingConfigs. Together with
	// GroupName it is what ClusterManagementAddOn spec.supportedConfigs and
	// ManagedClusterAddOn spec.configs name to refer to a HostingConfig.
	HostingConfigResource = "hostingconfigs"
)

var (
	// GroupVersion is the group and version of the objects in this package.
	GroupVersion = schema.GroupVersion{Group: GroupName, Version: Version}

	// SchemeGroupVersion is GroupVersion under the name generated code
	// (the apply configurations in package applyconfiguration) expects.
	SchemeGroupVersion = GroupVersion

	// HostedClusterDeploymentGVR identifies the HostedClusterDeployment resource, for
	// dynamic clients and informers (which keep fields the Go types do not know).
	HostedClusterDeploymentGVR = GroupVersion.WithResource(HostedClusterDeploymentResource)

	// HostingConfigGVR identifies the HostingConfig resource.
	HostingConfigGVR = GroupVersion.WithResource(HostingConfigResource)

	// SchemeBuilder registers the types of this package with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
