package localfleet

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	workv1 "open-cluster-management.io/api/work/v1"
	registrationwebhookv1 "open-cluster-management.io/ocm/pkg/registration/webhook/v1"
	workwebhookv1 "open-cluster-management.io/ocm/pkg/work/webhook/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// The mutating half of OCM's registration webhook for ManagedClusters
// (ocm pkg/registration/webhook/v1, managedcluster_mutating.go), served
// in-process and registered with the hub's API server under the name and
// path OCM's cluster-manager gives it. It is the real code, and it does
// what a real hub does to every ManagedCluster write:
//   - it stamps each new taint's timeAdded, from which the placement
//     controller counts a toleration's tolerationSeconds (placement
//     plugins/tainttoleration); without it every taint looked added in
//     year 1, so no tolerationSeconds ever tolerated anything here;
//   - it refuses a write that sets timeAdded on a new taint, or changes it
//     on an existing one ("It is not allowed to set TimeAdded of Taint");
//   - with OCM's DefaultClusterSet feature (on by default) it puts a
//     cluster without a cluster-set label into the "default" set.
//
// The validating half (whether the writer may accept a cluster or join it
// to a set, by SubjectAccessReview) is not served yet.
//
// OCM's ManifestWork webhook (ocm pkg/work/webhook/v1,
// manifestwork_validating.go) is served on the same port, under the name
// and path OCM's cluster-manager gives it
// (manifests/cluster-manager/hub/work/webhook-validatingconfiguration.yaml):
// it refuses an empty, oversized or duplicated workload and, for a work
// whose executor changes, a writer without execute-as on manifestworks for
// the executor's user name (with NilExecutorValidating, on here, a missing
// executor counts as the work agent's own identity).
const (
	ocmMutatingWebhookName = "managedclustermutators.admission.cluster.open-cluster-management.io"
	ocmMutatingWebhookPath = "/mutate-cluster-open-cluster-management-io-v1-managedcluster"
	ocmWorkWebhookName     = "manifestworkvalidators.admission.work.open-cluster-management.io"
	ocmWorkWebhookPath     = "/validate-work-open-cluster-management-io-v1-manifestwork"
)

// runOCMWebhook serves the webhook on a loopback port with a serving
// certificate of the hub's CA until ctx ends, and registers it. The hub's
// API server calls it for every ManagedCluster create and update from then
// on (failurePolicy Fail, as OCM's).
func runOCMWebhook(ctx context.Context, hub *Cluster, report func(component string, err error)) error {
	ocmFeatureGates()
	scheme := runtime.NewScheme()
	if err := clusterv1.Install(scheme); err != nil {
		return err
	}
	if err := workv1.Install(scheme); err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(hub.Config())
	if err != nil {
		return err
	}
	works := &workwebhookv1.ManifestWorkWebhook{}
	works.SetExternalKubeClientSet(client)
	pair, err := hub.ca.issueServing("cluster-manager-registration-webhook")
	if err != nil {
		return err
	}
	cert, err := tls.X509KeyPair(pair.CertPEM, pair.KeyPEM)
	if err != nil {
		return err
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle(ocmMutatingWebhookPath, admission.WithCustomDefaulter(scheme, &clusterv1.ManagedCluster{}, &registrationwebhookv1.ManagedClusterWebhook{}))
	mux.Handle(ocmWorkWebhookPath, admission.WithCustomValidator(scheme, &workv1.ManifestWork{}, works))
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := server.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			report("OCM registration webhook", err)
		}
	}()
	go func() {
		<-ctx.Done()
		_ = server.Close()
	}()
	addr := l.Addr().(*net.TCPAddr).String()
	if err := registerWorkWebhook(ctx, client, hub, "https://"+addr+ocmWorkWebhookPath); err != nil {
		return err
	}
	url := fmt.Sprintf("https://%s%s", addr, ocmMutatingWebhookPath)
	none := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ocmMutatingWebhookName},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    ocmMutatingWebhookName,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: hub.CAData()},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}, Rule: admissionregistrationv1.Rule{APIGroups: []string{clusterv1.GroupName}, APIVersions: []string{"*"}, Resources: []string{"managedclusters"}}}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](10),
		}},
	}
	if _, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("registering OCM's ManagedCluster webhook: %w", err)
		}
		// A restarted hub process: point the registration at this server.
		old, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, ocmMutatingWebhookName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cfg.ResourceVersion = old.ResourceVersion
		if _, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, cfg, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// registerWorkWebhook registers OCM's ManifestWork webhook at url as OCM's
// cluster-manager does (failurePolicy Fail), or points an existing
// registration (a restarted hub process) at it.
func registerWorkWebhook(ctx context.Context, client kubernetes.Interface, hub *Cluster, url string) error {
	none := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ocmWorkWebhookName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    ocmWorkWebhookName,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: hub.CAData()},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}, Rule: admissionregistrationv1.Rule{APIGroups: []string{workv1.GroupName}, APIVersions: []string{"*"}, Resources: []string{"manifestworks"}}}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](10),
		}},
	}
	webhooks := client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	if _, err := webhooks.Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("registering OCM's ManifestWork webhook: %w", err)
		}
		old, err := webhooks.Get(ctx, ocmWorkWebhookName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cfg.ResourceVersion = old.ResourceVersion
		if _, err := webhooks.Update(ctx, cfg, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	return nil
}
