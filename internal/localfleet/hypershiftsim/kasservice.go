package hypershiftsim

// What the control-plane operator publishes in a hosted control-plane
// namespace for clients of the hosted kube-apiserver, after HyperShift's
// control-plane-operator/controllers/hostedcontrolplane/kas/service.go (the
// kube-apiserver Service) and .../v2/kas/kubeconfig.go (the kubeconfig
// Secrets: service-network-admin-kubeconfig points at InClusterKASURL,
// https://kube-apiserver:6443 — config.KASSVCPort, 2040 on IBM Cloud, which
// the stand-in does not play — and admin-kubeconfig at the external
// address, which the HyperShift operator copies into the HostedCluster's
// namespace as <name>-admin-kubeconfig).

import (
	"context"
	"fmt"

	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	// KubeAPIServerService is the Service of the hosted kube-apiserver in
	// the control-plane namespace.
	KubeAPIServerService = "kube-apiserver"
	// KubeAPIServerServicePort is its port (HyperShift's KASSVCPort).
	KubeAPIServerServicePort = 6443
	// ControlPlaneAdminKubeconfigSecret is the admin kubeconfig with the
	// external address in the control-plane namespace (the
	// HostedControlPlane's spec.kubeconfig), the source of the
	// HostedCluster's <name>-admin-kubeconfig.
	ControlPlaneAdminKubeconfigSecret = "admin-kubeconfig"
	// AnnotationServiceNetworkDown, on a HostedCluster, makes its
	// kube-apiserver Service unreachable from the control-plane namespace
	// (the cluster DNS stand-in no longer resolves it), as a broken
	// Service network would; the external address still works.
	AnnotationServiceNetworkDown = "hypershiftsim.hcpfleet.io/service-network-down"
)

// InClusterKASURL is the address of the hosted kube-apiserver from inside
// its control-plane namespace.
func InClusterKASURL() string {
	return fmt.Sprintf("https://%s:%d", KubeAPIServerService, KubeAPIServerServicePort)
}

// KubeAPIServerServiceNames are the names a pod of the control-plane
// namespace ns reaches the Service by, which HyperShift's kube-apiserver
// serving certificate carries.
func KubeAPIServerServiceNames(ns string) []string {
	return []string{KubeAPIServerService, KubeAPIServerService + "." + ns, KubeAPIServerService + "." + ns + ".svc",
		KubeAPIServerService + "." + ns + ".svc.cluster.local"}
}

// ensureKubeAPIServerService creates the kube-apiserver Service (ClusterIP,
// port 6443 to the pods' "client" port) and, with a cluster DNS stand-in,
// routes it to the real listener of the control plane.
func (r *hostedClusterReconciler) ensureKubeAPIServerService(ctx context.Context, hc *hyperv1.HostedCluster, cp ControlPlane) error {
	ns := ControlPlaneNamespace(hc)
	if r.opts.ClusterDNS != nil {
		if _, down := hc.Annotations[AnnotationServiceNetworkDown]; down {
			r.opts.ClusterDNS.Remove(ns, KubeAPIServerService)
		} else {
			r.opts.ClusterDNS.Set(ns, KubeAPIServerService, KubeAPIServerServicePort, fmt.Sprintf("%s:%d", cp.Host, cp.Port))
		}
	}
	err := r.reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: KubeAPIServerService}, &corev1.Service{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	labels := map[string]string{"app": "kube-apiserver", "hypershift.openshift.io/control-plane-component": "kube-apiserver"}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: KubeAPIServerService, Labels: labels},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: labels,
			Ports: []corev1.ServicePort{{Port: KubeAPIServerServicePort, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("client")}}}}
	if err := r.client.Create(ctx, svc); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Service %s/%s: %w", ns, KubeAPIServerService, err)
	}
	return nil
}

// withServer is kubeconfig with every cluster's server set to server (same
// CA and credentials).
func withServer(kubeconfig []byte, server string) ([]byte, error) {
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return nil, err
	}
	for _, c := range cfg.Clusters {
		c.Server = server
	}
	return clientcmd.Write(*cfg)
}

// ensureControlPlaneSecret writes a Secret of the control-plane namespace
// with the kubeconfig (key "kubeconfig") when missing or different; it
// goes with the namespace.
func (r *hostedClusterReconciler) ensureControlPlaneSecret(ctx context.Context, hc *hyperv1.HostedCluster, name string, kubeconfig []byte) error {
	key := types.NamespacedName{Namespace: ControlPlaneNamespace(hc), Name: name}
	live := &corev1.Secret{}
	err := r.reader.Get(ctx, key, live)
	switch {
	case err == nil && string(live.Data[KubeconfigKey]) == string(kubeconfig):
		return nil
	case err == nil:
		live.Data = map[string][]byte{KubeconfigKey: kubeconfig}
		return r.client.Update(ctx, live)
	case apierrors.IsNotFound(err):
		return r.client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
			Data: map[string][]byte{KubeconfigKey: kubeconfig}})
	default:
		return err
	}
}

// ensureServiceNetworkKubeconfig publishes the control plane's Service and
// its kubeconfigs: ServiceNetworkKubeconfigSecret at the in-cluster
// address, ControlPlaneAdminKubeconfigSecret at the external one.
func (r *hostedClusterReconciler) ensureServiceNetworkKubeconfig(ctx context.Context, hc *hyperv1.HostedCluster, cp ControlPlane) error {
	if err := r.ensureKubeAPIServerService(ctx, hc, cp); err != nil {
		return err
	}
	inCluster, err := withServer(cp.Kubeconfig, InClusterKASURL())
	if err != nil {
		return fmt.Errorf("the control plane's kubeconfig: %w", err)
	}
	if err := r.ensureControlPlaneSecret(ctx, hc, ServiceNetworkKubeconfigSecret, inCluster); err != nil {
		return err
	}
	return r.ensureControlPlaneSecret(ctx, hc, ControlPlaneAdminKubeconfigSecret, cp.Kubeconfig)
}
