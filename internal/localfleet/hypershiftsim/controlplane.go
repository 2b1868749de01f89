package hypershiftsim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ControlPlane is what a hosted control plane offers its clients.
type ControlPlane struct {
	// Host and Port are published as status.controlPlaneEndpoint.
	Host string
	Port int32
	// Kubeconfig is the admin kubeconfig published in the
	// <name>-admin-kubeconfig Secret. It must be the same bytes for the same
	// control plane every time (the Secret is rewritten, and the change
	// propagated to the hub, whenever it differs).
	Kubeconfig []byte
}

// ControlPlanes runs the control planes of hosted clusters.
type ControlPlanes interface {
	// Ensure runs (or finds running) the control plane of hc; it is called
	// on every reconcile once the rollout is done.
	Ensure(ctx context.Context, hc *hyperv1.HostedCluster) (ControlPlane, error)
	// Remove stops the control plane of hc (being deleted). One
	// ControlPlanes may serve the stand-ins of several management clusters,
	// where namespace/name is not unique: hc.UID is.
	Remove(ctx context.Context, hc *hyperv1.HostedCluster) error
}

// EndpointOnly runs no control plane: it publishes the endpoint HyperShift
// would (api.<name>.<baseDomain>:6443) and an admin kubeconfig for it with a
// token derived from the HostedCluster's UID.
type EndpointOnly struct{}

// Ensure implements ControlPlanes.
func (EndpointOnly) Ensure(_ context.Context, hc *hyperv1.HostedCluster) (ControlPlane, error) {
	cp := ControlPlane{Host: fmt.Sprintf("api.%s.%s", hc.Name, hc.Spec.DNS.BaseDomain), Port: 6443}
	sum := sha256.Sum256([]byte("hypershiftsim/" + string(hc.UID)))
	kubeconfig, err := renderKubeconfig(hc.Name, fmt.Sprintf("https://%s:%d", cp.Host, cp.Port), hex.EncodeToString(sum[:]))
	if err != nil {
		return ControlPlane{}, err
	}
	cp.Kubeconfig = kubeconfig
	return cp, nil
}

// Remove implements ControlPlanes.
func (EndpointOnly) Remove(context.Context, *hyperv1.HostedCluster) error { return nil }

func renderKubeconfig(name, server, token string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["admin"] = &clientcmdapi.Context{Cluster: name, AuthInfo: "admin"}
	cfg.CurrentContext = "admin"
	return clientcmd.Write(*cfg)
}

// releaseVersionPattern is an OpenShift version at the start of a release
// image tag, with an optional pre-release (4.18.5, 4.19.0-rc.2); what follows
// (an architecture such as -multi or -x86_64) is not part of it.
var releaseVersionPattern = regexp.MustCompile(`^(\d+)\.(\d+)\.\d+(-(?:rc|ec|fc)\.\d+)?`)

// releaseVersion reads the OpenShift version of a release image from its
// tag, where the real operator reads the payload's metadata, and checks that
// its minor version is supported.
func releaseVersion(image string) (string, error) {
	if v, ok := releaseDigests.Load(image); ok {
		return checkSupported(image, v.(string))
	}
	tag := ""
	if i := strings.LastIndexByte(image, ':'); i > strings.LastIndexByte(image, '/') && strings.LastIndexByte(image, '@') < 0 {
		tag = image[i+1:]
	}
	m := releaseVersionPattern.FindStringSubmatch(tag)
	if m == nil {
		return "", fmt.Errorf("cannot determine the OpenShift version of release image %q: the HyperShift stand-in reads it from the image tag (e.g. quay.io/openshift-release-dev/ocp-release:4.18.5-multi)", image)
	}
	return checkSupported(image, m[0])
}

// checkSupported returns version when its minor is supported.
func checkSupported(image, version string) (string, error) {
	m := releaseVersionPattern.FindStringSubmatch(version)
	if m == nil {
		return "", fmt.Errorf("release image %q has version %q, which is not an OpenShift version", image, version)
	}
	if minor := m[1] + "." + m[2]; !slices.Contains(SupportedVersions, minor) {
		return "", fmt.Errorf("release image %q is OpenShift %s, which this HyperShift operator does not support (supported: %v)", image, m[0], SupportedVersions)
	}
	return m[0], nil
}
