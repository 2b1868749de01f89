// Package agent pins the Cluster API Agent provider API types that
// hack/capi/generate.sh runs controller-gen over. It is its own module so
// that the provider's older dependency set (cluster-api v1.7, k8s 0.29) never
// enters the product's go.mod; only the generated CRD YAMLs do.
package agent

import _ "github.com/openshift/cluster-api-provider-agent/api/v1beta1"
