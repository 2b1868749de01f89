//go:build integration

package proxy

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// syncBuffer is a stderr the test reads while Main writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// writeKubeconfig writes cfg (client certificates, as envtest issues) to a
// kubeconfig file.
func writeKubeconfig(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "c"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSidecarCommand runs the agent's proxy subcommand against a real
// apiserver that has only the private CAPI CRDs, as the migration's sidecar
// runs it, and talks to it as a CAPI workload would.
func TestSidecarCommand(t *testing.T) {
	e := startEnv(t)
	kubeconfig := writeKubeconfig(t, e.direct)

	t.Run("bad invocations fail with a clear error", func(t *testing.T) {
		if _, err := os.Stat("/var/run/secrets/kubernetes.io/serviceaccount/token"); err == nil {
			t.Fatal("this test assumes it does not run in a pod")
		}
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--kubeconfig=" + kubeconfig, "--listen=0.0.0.0:0"}, "only listens on loopback"},
			{[]string{"--listen=127.0.0.1:0"}, "not running in a pod and no --kubeconfig given"},
			{[]string{"--kubeconfig=" + filepath.Join(t.TempDir(), "missing")}, "kubeconfig"},
			{[]string{"--kubeconfig=" + kubeconfig, "extra"}, `unexpected arguments ["extra"]`},
			{[]string{"--direction=reverse"}, "flag provided but not defined: -direction"},
		} {
			var stderr syncBuffer
			err := Main(context.Background(), tc.args, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Main(%v) = %v, want an error containing %q", tc.args, err, tc.want)
			}
		}
	})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- Main(ctx, []string{"--kubeconfig=" + kubeconfig, "--listen=127.0.0.1:0"}, &stderr) }()
	serving := regexp.MustCompile(`serving on http://(127\.0\.0\.1:\d+) for `)
	var addr string
	for deadline := time.Now().Add(30 * time.Second); addr == ""; {
		if m := serving.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
			break
		}
		select {
		case err := <-done:
			t.Fatalf("Main returned before serving: %v\n%s", err, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("Main did not say where it serves: %q", stderr.String())
		}
	}
	t.Logf("stderr: %s", strings.TrimSpace(stderr.String()))

	ns := "sidecar"
	if err := e.dc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	typed, err := client.NewWithWatch(ClientConfig(addr), client.Options{Scheme: e.scheme})
	if err != nil {
		t.Fatal(err)
	}
	cluster := &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "c1", Namespace: ns},
		Spec: clusterv1.ClusterSpec{
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "AgentCluster", Name: "c1"},
		},
	}
	if err := typed.Create(ctx, cluster); err != nil {
		t.Fatalf("create through the sidecar: %v", err)
	}
	list := &clusterv1.ClusterList{}
	if err := typed.List(ctx, list, client.InNamespace(ns)); err != nil || len(list.Items) != 1 || list.Items[0].APIVersion != stdGV && list.Items[0].APIVersion != "" {
		t.Fatalf("list through the sidecar: %v %+v", err, list.Items)
	}
	rest := e.atRest(t, privGV, "Cluster", ns, "c1")
	if got := str(t, rest, "spec", "infrastructureRef", "apiGroup"); got != "infrastructure.cluster.hypershift.openshift.io" {
		t.Errorf("at rest: infrastructureRef.apiGroup %q", got)
	}
	if out := kubectl(t, addr, "get", "clusters.cluster.x-k8s.io", "-n", ns, "-o", "jsonpath={.items[*].apiVersion} {.items[*].metadata.name}"); out != stdGV+" c1" {
		t.Errorf("kubectl through the sidecar: %q", out)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Main after its context ended: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Main did not return after its context ended")
	}
}
