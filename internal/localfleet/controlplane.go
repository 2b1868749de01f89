package localfleet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// etcdServer is the one etcd all clusters of a fleet share, each apiserver
// under its own --etcd-prefix (saves a process and ~100 MB per cluster).
type etcdServer struct {
	proc      *process
	clientURL string
}

func startEtcd(ctx context.Context, binDir, dir string) (*etcdServer, error) {
	clientPort, err := freePort()
	if err != nil {
		return nil, err
	}
	peerPort, err := freePort()
	if err != nil {
		return nil, err
	}
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	args := []string{
		"--name=localfleet",
		"--data-dir=" + filepath.Join(dir, "etcd-data"),
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=localfleet=" + peerURL,
		// Throw-away data: durability buys nothing here and fsync dominates
		// apiserver write latency on small disks.
		"--unsafe-no-fsync",
		"--quota-backend-bytes=" + strconv.Itoa(4<<30),
		"--log-level=warn",
	}
	p, err := startProcess("etcd", filepath.Join(binDir, "etcd"), args, filepath.Join(dir, "logs", "etcd.log"))
	if err != nil {
		return nil, err
	}
	client := &http.Client{Timeout: time.Second}
	err = p.waitReady(ctx, 30*time.Second, func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, clientURL+"/health", nil)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/health returned %d", resp.StatusCode)
		}
		return nil
	})
	if err != nil {
		p.stop(5 * time.Second)
		return nil, err
	}
	return &etcdServer{proc: p, clientURL: clientURL}, nil
}

// Cluster is one real Kubernetes control plane of the fleet: a kube-apiserver
// with client-certificate authentication and RBAC, and a
// kube-controller-manager for garbage collection, namespace deletion and CSR
// signing. Nothing runs pods.
type Cluster struct {
	// Name is "hub" or the management cluster's name.
	Name string
	// Host is the apiserver URL (https://127.0.0.1:port).
	Host string
	// Dir holds the cluster's certificates and kubeconfigs.
	Dir string
	// KubeconfigPath is an admin (system:masters) kubeconfig file.
	KubeconfigPath string

	ca    *certificateAuthority
	admin *rest.Config
	kcm   *process

	// apiserverMu guards apiserver, which StopAPIServer and StartAPIServer
	// replace; apiserverStart is how to start it again (same port, same
	// arguments, same log file).
	apiserverMu    sync.Mutex
	apiserver      *process
	apiserverStart func() (*process, error)
	// nice is the scheduling priority its processes run at (Options.ManagementClusterNice).
	nice int
}

// Config returns a copy of the admin rest.Config.
func (c *Cluster) Config() *rest.Config { return rest.CopyConfig(c.admin) }

// ConfigFor returns a rest.Config that authenticates as user in groups with a
// client certificate signed by the cluster's CA: a real identity that RBAC
// judges like any other.
func (c *Cluster) ConfigFor(user string, groups ...string) (*rest.Config, error) {
	kp, err := c.ca.issueClient(user, groups...)
	if err != nil {
		return nil, err
	}
	return &rest.Config{
		Host: c.Host,
		TLSClientConfig: rest.TLSClientConfig{
			CAData: c.ca.certPEM, CertData: kp.CertPEM, KeyData: kp.KeyPEM,
		},
		QPS: 100, Burst: 200,
	}, nil
}

// CAData is the PEM bundle that verifies the apiserver's serving certificate.
func (c *Cluster) CAData() []byte { return c.ca.certPEM }

// startCluster starts a cluster's apiserver (on port, or a free port when 0)
// and controller manager and waits until both serve.
func startCluster(ctx context.Context, binDir, dir, name, etcdURL string, port, nice int, servingNames ...string) (*Cluster, error) {
	apiserverName := "kube-apiserver (" + name + ")"
	if port == 0 {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		port = p
	} else if err := portFree(port); err != nil {
		return nil, fmt.Errorf("%s: %w", apiserverName, err)
	}
	ca, err := newCertificateAuthority(name + "-ca")
	if err != nil {
		return nil, err
	}
	serving, err := ca.issueServing("kube-apiserver", servingNames...)
	if err != nil {
		return nil, err
	}
	adminCert, err := ca.issueClient("localfleet-admin", "system:masters")
	if err != nil {
		return nil, err
	}
	// The controller manager is trusted with everything it does (GC and
	// namespace deletion touch every resource type), as on a real cluster.
	kcmCert, err := ca.issueClient("system:kube-controller-manager", "system:masters")
	if err != nil {
		return nil, err
	}
	saKey, saPub, err := newServiceAccountKey()
	if err != nil {
		return nil, err
	}
	host := fmt.Sprintf("https://127.0.0.1:%d", port)
	pki := filepath.Join(dir, "pki")
	if err := writeFiles(pki, map[string][]byte{
		"ca.crt": ca.certPEM, "ca.key": ca.keyPEM,
		"serving.crt": serving.CertPEM, "serving.key": serving.KeyPEM,
		"sa.key": saKey, "sa.pub": saPub,
	}); err != nil {
		return nil, err
	}
	c := &Cluster{Name: name, Host: host, Dir: dir, ca: ca, KubeconfigPath: filepath.Join(dir, "admin.kubeconfig"), nice: nice}
	if err := writeKubeconfig(c.KubeconfigPath, name, host, ca.certPEM, adminCert); err != nil {
		return nil, err
	}
	kcmKubeconfig := filepath.Join(dir, "kube-controller-manager.kubeconfig")
	if err := writeKubeconfig(kcmKubeconfig, name, host, ca.certPEM, kcmCert); err != nil {
		return nil, err
	}
	c.admin, err = clientcmd.BuildConfigFromFlags("", c.KubeconfigPath)
	if err != nil {
		return nil, err
	}
	c.admin.QPS, c.admin.Burst = 200, 400

	logs := filepath.Join(filepath.Dir(dir), "logs")
	apiArgs := []string{
		"--etcd-servers=" + etcdURL,
		"--etcd-prefix=/" + name,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + filepath.Join(pki, "serving.crt"),
		"--tls-private-key-file=" + filepath.Join(pki, "serving.key"),
		"--client-ca-file=" + filepath.Join(pki, "ca.crt"),
		"--service-account-key-file=" + filepath.Join(pki, "sa.pub"),
		"--service-account-signing-key-file=" + filepath.Join(pki, "sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--authorization-mode=RBAC",
		"--anonymous-auth=false",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--allow-privileged=true",
		// No pods run here: no kubelets to reach, no endpoints to reconcile.
		"--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=false",
		"--profiling=false",
		"--v=1",
	}
	c.apiserverStart = func() (*process, error) {
		return startProcess(apiserverName, filepath.Join(binDir, "kube-apiserver"), apiArgs,
			filepath.Join(logs, name+"-kube-apiserver.log"))
	}
	if err := c.StartAPIServer(ctx); err != nil {
		return nil, err
	}
	client, err := kubernetes.NewForConfig(c.admin)
	if err != nil {
		c.stop()
		return nil, err
	}

	kcmArgs := []string{
		"--kubeconfig=" + kcmKubeconfig,
		"--authentication-kubeconfig=" + kcmKubeconfig,
		"--authorization-kubeconfig=" + kcmKubeconfig,
		"--controllers=garbagecollector,namespace,csrsigning,csrcleaner,serviceaccount,root-ca-cert-publisher",
		"--cluster-signing-cert-file=" + filepath.Join(pki, "ca.crt"),
		"--cluster-signing-key-file=" + filepath.Join(pki, "ca.key"),
		"--root-ca-file=" + filepath.Join(pki, "ca.crt"),
		"--leader-elect=false",
		"--secure-port=0",
		"--use-service-account-credentials=false",
		"--v=1",
	}
	c.kcm, err = startProcess("kube-controller-manager ("+name+")", filepath.Join(binDir, "kube-controller-manager"), kcmArgs,
		filepath.Join(logs, name+"-kube-controller-manager.log"))
	if err == nil {
		err = c.kcm.renice(nice)
	}
	if err != nil {
		c.stop()
		return nil, err
	}
	// The controller manager has no health endpoint without a secure port; it
	// is ready when it has published the root CA into a namespace.
	if err := c.kcm.waitReady(ctx, 60*time.Second, func(ctx context.Context) error {
		_, err := client.CoreV1().ConfigMaps("default").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err
	}); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// StopAPIServer stops the cluster's kube-apiserver (SIGTERM, then SIGKILL),
// as an outage would: everything else (etcd, the controller manager, the
// agents and controllers that talk to it) keeps running and retrying. The
// fleet does not report the stopped API server as a failure.
func (c *Cluster) StopAPIServer() {
	c.apiserverMu.Lock()
	p := c.apiserver
	c.apiserver = nil
	c.apiserverMu.Unlock()
	if p != nil {
		p.stop(10 * time.Second)
	}
}

// StartAPIServer starts the cluster's kube-apiserver again after
// StopAPIServer, on the same address with the same arguments (its log file
// grows), and waits until it is ready. It does nothing if it runs.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	c.apiserverMu.Lock()
	defer c.apiserverMu.Unlock()
	if c.apiserver != nil {
		return nil
	}
	p, err := c.apiserverStart()
	if err != nil {
		return err
	}
	if err := p.renice(c.nice); err != nil {
		p.stop(10 * time.Second)
		return err
	}
	client, err := kubernetes.NewForConfig(c.admin)
	if err != nil {
		p.stop(10 * time.Second)
		return err
	}
	if err := p.waitReady(ctx, 90*time.Second, func(ctx context.Context) error {
		return client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
	}); err != nil {
		p.stop(10 * time.Second)
		return err
	}
	c.apiserver = p
	return nil
}

// checkAlive reports a component of the cluster that has died.
func (c *Cluster) checkAlive() error {
	c.apiserverMu.Lock()
	apiserver := c.apiserver
	c.apiserverMu.Unlock()
	for _, p := range []*process{apiserver, c.kcm} {
		if p == nil {
			continue
		}
		if gone, why := p.exited(); gone {
			return p.failure("exited", why)
		}
	}
	return nil
}

func (c *Cluster) stop() {
	if c.kcm != nil {
		c.kcm.stop(5 * time.Second)
	}
	c.StopAPIServer()
}

func writeKubeconfig(path, name, host string, caPEM []byte, kp keyPair) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: kp.CertPEM, ClientKeyData: kp.KeyPEM}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*cfg, path)
}

// Process is one control-plane process of the fleet, for benchmarks that
// measure what each uses.
type Process struct {
	// Cluster is "hub", a management cluster's or a guest's name, or empty
	// for the etcd they share.
	Cluster string
	// Component is "etcd", "kube-apiserver" or "kube-controller-manager".
	Component string
	PID       int
}

// Processes lists the fleet's running control-plane processes.
func (f *Fleet) Processes() []Process {
	var out []Process
	if f.etcd != nil {
		out = append(out, Process{Component: "etcd", PID: f.etcd.proc.cmd.Process.Pid})
	}
	for _, c := range append([]*Cluster{f.Hub}, f.managementAndGuests()...) {
		c.apiserverMu.Lock()
		if c.apiserver != nil {
			out = append(out, Process{Cluster: c.Name, Component: "kube-apiserver", PID: c.apiserver.cmd.Process.Pid})
		}
		c.apiserverMu.Unlock()
		if c.kcm != nil {
			out = append(out, Process{Cluster: c.Name, Component: "kube-controller-manager", PID: c.kcm.cmd.Process.Pid})
		}
	}
	return out
}

// ReniceManagementClusters sets the nice value of the management clusters'
// and guests' running kube-apiservers and kube-controller-managers (and
// the value those started later get). Raising it needs no privilege;
// lowering it again needs CAP_SYS_NICE (root).
func (f *Fleet) ReniceManagementClusters(nice int) error {
	f.mu.Lock()
	f.opts.ManagementClusterNice = nice
	f.mu.Unlock()
	var errs []error
	for _, c := range f.managementAndGuests() {
		c.apiserverMu.Lock()
		c.nice = nice
		procs := []*process{c.apiserver, c.kcm}
		c.apiserverMu.Unlock()
		for _, p := range procs {
			if p != nil {
				errs = append(errs, p.renice(nice))
			}
		}
	}
	return errors.Join(errs...)
}

// managementAndGuests lists the management clusters' and the guests'
// control planes: every cluster but the hub.
func (f *Fleet) managementAndGuests() []*Cluster {
	f.mu.Lock()
	defer f.mu.Unlock()
	clusters := make([]*Cluster, 0, len(f.Managed)+len(f.guests))
	for _, m := range f.Managed {
		clusters = append(clusters, m.Cluster)
	}
	for _, g := range f.guests {
		clusters = append(clusters, g)
	}
	return clusters
}
