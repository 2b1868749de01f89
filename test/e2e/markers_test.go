//go:build integration

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/pkg/addon"
)

// Secret markers: every Secret the journey gives hcp-fleet — the tenant's
// (the examples) and the fleet admin's (HostingConfig credentials) — holds
// markerValue in its values and an extra key named markerKey. Neither may
// show up in any log, event, condition or other object outside Secrets (and
// the ManifestWork specs that deliver them). Random per run, so a leftover
// of an earlier run cannot satisfy or fail the check.
var markerValue, markerKey = func() (string, string) {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "secretvalue" + hex.EncodeToString(b), "secretkey" + hex.EncodeToString(b)
}()

// oidcCredentials is the fleet admin's credentials Secret the default
// HostingConfig references in the journey (the key is the default one: a
// key the HostingConfig names is not a secret, the others are).
const oidcCredentials = "e2e-oidc-credentials"

// withMarkers puts the markers into every Secret among objs: markerValue
// in place of the examples' placeholders, and an extra markerKey.
func withMarkers(objs []*unstructured.Unstructured) {
	for _, o := range objs {
		if o.GetKind() != "Secret" {
			continue
		}
		data, _, _ := unstructured.NestedStringMap(o.Object, "stringData")
		for k, v := range data {
			// The pull secret's auth is base64("placeholder:placeholder").
			v = strings.ReplaceAll(v, "cGxhY2Vob2xkZXI6cGxhY2Vob2xkZXI=", markerValue)
			for _, p := range []string{"PLACEHOLDER", "Placeholder", "placeholder"} {
				v = strings.ReplaceAll(v, p, markerValue)
			}
			data[k] = v
		}
		data[markerKey] = markerValue
		Expect(unstructured.SetNestedStringMap(o.Object, data, "stringData")).To(Succeed())
	}
}

// useMarkedHostingConfigCredentials makes the default HostingConfig
// reference OIDC storage credentials holding the markers, so they travel
// the admin's path: hub render, the add-on's ManifestWork, the agent, the
// HyperShift operator's namespace.
func useMarkedHostingConfigCredentials(ctx context.Context) {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: addon.DefaultHubNamespace, Name: oidcCredentials},
		StringData: map[string]string{v1alpha1.DefaultCredentialsKey: "[default]\naws_secret_access_key = " + markerValue + "\n", markerKey: markerValue}}
	Expect(hubc.Create(ctx, secret)).To(Succeed())
	patch := fmt.Sprintf(`{"spec":{"install":{"oidcStorage":{"bucket":"e2e-oidc","region":"us-east-1","credentialsSecret":{"name":%q}}}}}`, oidcCredentials)
	Expect(hubc.Patch(ctx, &v1alpha1.HostingConfig{ObjectMeta: metav1.ObjectMeta{Namespace: addon.DefaultHubNamespace, Name: "default"}},
		client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
}

// expectMarkersDelivered checks the positive side: the markers did reach
// the management cluster through hcp-fleet (so their absence elsewhere
// means something).
func expectMarkersDelivered(ctx context.Context, cluster, namespace, secret string) {
	GinkgoHelper()
	s, err := hostsKube[cluster].CoreV1().Secrets(namespace).Get(ctx, secret, metav1.GetOptions{})
	Expect(err).NotTo(HaveOccurred())
	found := false
	for _, v := range s.Data {
		found = found || bytes.Contains(v, []byte(markerValue))
	}
	Expect(found).To(BeTrue(), "Secret %s/%s on %s holds the marker value", namespace, secret, cluster)
}

// markerLeaks lists every place outside Secrets where a marker shows on the
// cluster behind cfg: any object of any listable resource (events,
// conditions, ClusterClaims, ConfigMaps, custom resources' specs and
// statuses), except Secrets themselves and the ManifestWork specs that
// carry delivered Secrets by design (their status is checked).
func markerLeaks(ctx context.Context, name string, cfg *rest.Config) ([]string, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	// Partial discovery (an aggregated API that is down) still lists the
	// rest.
	lists, _ := dc.ServerPreferredResources()
	var leaks []string
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			if gv.Group == "" && r.Name == "secrets" {
				continue
			}
			objs, err := dyn.Resource(gv.WithResource(r.Name)).List(ctx, metav1.ListOptions{})
			if err != nil {
				continue // e.g. a CRD deleted since discovery
			}
			for _, o := range objs.Items {
				if gv.Group == "work.open-cluster-management.io" && r.Name == "manifestworks" {
					delete(o.Object, "spec")
				}
				b, err := json.Marshal(o.Object)
				if err != nil {
					return nil, err
				}
				if where := markerIn(b); where != "" {
					leaks = append(leaks, fmt.Sprintf("%s: %s %s/%s holds the marker %s", name, r.Name, o.GetNamespace(), o.GetName(), where))
				}
			}
		}
	}
	return leaks, nil
}

// logLeaks lists the fleet's log files that hold a marker: the in-process
// log (the hub, the agents, the OCM controllers) and every API server's and
// controller manager's. It also checks the logs are really there and carry
// hcp-fleet's own lines, so an empty or misplaced log cannot pass.
func logLeaks(fleet *localfleet.Fleet) ([]string, error) {
	var leaks []string
	ours := false
	err := filepath.WalkDir(fleet.LogDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		// The hub's controllers log under their names (and the kind they
		// reconcile), the agent's under the add-on's name.
		ours = ours || (bytes.Contains(b, []byte("hostedclusterdeployment")) || bytes.Contains(b, []byte(`"hcd-delivery"`))) && bytes.Contains(b, []byte(addon.Name))
		if where := markerIn(b); where != "" {
			leaks = append(leaks, fmt.Sprintf("log %s holds the marker %s", path, where))
		}
		return nil
	})
	if err == nil && !ours {
		err = fmt.Errorf("no hcp-fleet log lines under %s: the check would prove nothing", fleet.LogDir)
	}
	return leaks, err
}

// markerIn says which marker b holds, in context, or "".
func markerIn(b []byte) string {
	for _, m := range []string{markerValue, markerKey} {
		if i := bytes.Index(b, []byte(m)); i >= 0 {
			lo, hi := max(0, i-120), min(len(b), i+len(m)+40)
			return fmt.Sprintf("%q in …%s…", m, b[lo:hi])
		}
	}
	return ""
}

// expectNoMarkerLeaks scans the hub, every management cluster and the
// fleet's logs for the markers.
func expectNoMarkerLeaks(ctx context.Context) {
	GinkgoHelper()
	leaks, err := markerLeaks(ctx, "hub", fleet.Hub.Config())
	Expect(err).NotTo(HaveOccurred())
	for _, m := range fleet.Managed {
		l, err := markerLeaks(ctx, m.Name, m.Config())
		Expect(err).NotTo(HaveOccurred())
		leaks = append(leaks, l...)
	}
	l, err := logLeaks(fleet)
	Expect(err).NotTo(HaveOccurred())
	Expect(append(leaks, l...)).To(BeEmpty())
}
