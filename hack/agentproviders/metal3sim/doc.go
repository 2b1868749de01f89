// Package metal3sim holds stand-in API types shaped like the parts of
// Metal3 (cluster-api-provider-metal3's Metal3Machine/Metal3MachineTemplate,
// baremetal-operator's BareMetalHost) that the OpenShift assisted providers
// touch. They exist only so that hack/agentproviders/generate.sh can
// generate CRDs for the test kube-apiserver: the real Metal3 API modules pull
// in dependency versions this module cannot take. Nothing imports them.
package metal3sim
