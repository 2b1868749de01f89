// Package hypershiftsim is the local fleet's stand-in for the HyperShift
// operator. Nothing here runs the real operator (no pods, no release
// payloads), so when the agent has installed the operator Deployment, the
// kubelet stand-in runs this program in its place, with the operator's own
// ServiceAccount. It does what the fleet can observe of the operator:
// publishes the supported-versions ConfigMap. (Driving HostedCluster and
// NodePool status comes with the end-to-end issue.)
//
// Test and demo infrastructure only; never used by product code.
package hypershiftsim

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// SupportedVersions are the OpenShift minor versions the stand-in claims to
// support, newest first, as the real operator lists them.
var SupportedVersions = []string{"4.19", "4.18", "4.17", "4.16", "4.15", "4.14"}

// Operator is the kubelet stand-in program for the HyperShift operator image.
func Operator(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("hypershift-operator (stand-in)", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	namespace := fs.String("namespace", "hypershift", "")
	kubeconfig := fs.String("kubeconfig", "", "")
	// Accept (and ignore) every other operator flag.
	if len(args) > 0 && args[0] == "run" {
		args = args[1:]
	}
	var known []string
	for _, a := range args {
		for _, p := range []string{"--namespace=", "--kubeconfig="} {
			if len(a) >= len(p) && a[:len(p)] == p {
				known = append(known, a)
			}
		}
	}
	if err := fs.Parse(known); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := publishSupportedVersions(ctx, client, *namespace); err != nil {
		return fmt.Errorf("publishing supported versions: %w", err)
	}
	<-ctx.Done()
	return nil
}

func publishSupportedVersions(ctx context.Context, client kubernetes.Interface, namespace string) error {
	data, err := json.Marshal(map[string][]string{"versions": SupportedVersions})
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "supported-versions", Namespace: namespace,
			Labels: map[string]string{"hypershift.openshift.io/supported-versions": "true"}},
		Data: map[string]string{"supported-versions": string(data), "server-version": "hypershiftsim"},
	}
	_, err = client.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = client.CoreV1().ConfigMaps(namespace).Update(ctx, cm, metav1.UpdateOptions{})
	}
	return err
}
