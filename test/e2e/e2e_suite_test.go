//go:build integration

// Package e2e runs the user's journey through hcp-fleet against a local
// fleet (a hub and two management clusters, real kube-apiservers and the real
// OCM controllers; see internal/localfleet), started once for the suite:
// enable the add-on, deploy the examples, upgrade, delete with both policies,
// disable the add-on, and check that the management clusters are left clean.
// Every step asserts on hub and management-cluster objects.
//
// `go test -tags integration -v ./test/e2e` prints each step's duration at the end.
package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hcp-fleet/hcp-fleet/internal/localfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hcpfleet"
	"github.com/hcp-fleet/hcp-fleet/internal/localfleet/hypershiftsim"
	"github.com/hcp-fleet/hcp-fleet/pkg/cmd/hub"
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	_, reporter := GinkgoConfiguration()
	// Under `make test` (gotestsum) the output is a log, not a terminal.
	if fi, err := os.Stdout.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		reporter.NoColor = true
	}
	RunSpecs(t, "hcp-fleet end-to-end", reporter)
}

var (
	fleet   *localfleet.Fleet
	product *hcpfleet.Product
	hubc    client.Client
	// hosts are the management clusters' clients by name.
	hosts     map[string]dynamic.Interface
	hostsKube map[string]kubernetes.Interface
)

var _ = BeforeSuite(func(ctx SpecContext) {
	var err error
	fleet, err = localfleet.Start(ctx, localfleet.Options{
		ManagementClusters: 2, StatusSyncInterval: time.Second, AddOnLeaseSyncInterval: time.Second,
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		if CurrentSpecReport().Failed() || os.Getenv("LOCALFLEET_KEEP") != "" {
			fmt.Fprintf(GinkgoWriter, "fleet logs: %s (LOCALFLEET_KEEP=1 keeps them)\n", fleet.LogDir)
		}
		fleet.Stop()
	})
	Expect(hcpfleet.Install(ctx, fleet)).To(Succeed())
	// Hosted clusters get real kube-apiservers: their kubeconfigs work.
	product, err = hcpfleet.Start(fleet, hcpfleet.Options{
		HyperShift: hypershiftsim.Options{ControlPlanes: hcpfleet.GuestControlPlanes{Fleet: fleet}},
		// The namespace janitor deletes an empty hosting namespace after 2s
		// instead of 30s; the guests' operators are read often (the held
		// upgrade waits for the report).
		AgentArgs: func(string) []string {
			return []string{"--namespace-gc-grace=2s", "--olm-operator-limits-resync=2s"}
		},
	})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { product.Stop() })

	hubc, err = client.New(fleet.Hub.Config(), client.Options{Scheme: hub.Scheme})
	Expect(err).NotTo(HaveOccurred())
	hosts, hostsKube = map[string]dynamic.Interface{}, map[string]kubernetes.Interface{}
	for _, m := range fleet.Managed {
		hosts[m.Name] = dynamic.NewForConfigOrDie(m.Config())
		hostsKube[m.Name] = kubernetes.NewForConfigOrDie(m.Config())
	}
}, NodeTimeout(6*time.Minute))

// The fleet's own failures (a component that exited) explain a step's
// failure better than its timeout does.
var _ = AfterEach(func() {
	if CurrentSpecReport().Failed() && fleet != nil {
		if err := fleet.Err(); err != nil {
			fmt.Fprintf(GinkgoWriter, "the local fleet reports: %v\n", err)
		}
		fmt.Fprintf(GinkgoWriter, "fleet logs: %s\n", fleet.LogDir)
	}
})

// Per-step durations, printed once the suite ends.
var _ = ReportAfterSuite("step durations", func(r Report) {
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "\nhcp-fleet e2e step durations:")
	for _, s := range r.SpecReports {
		name := s.LeafNodeText
		switch s.LeafNodeType {
		case types.NodeTypeIt:
		case types.NodeTypeBeforeSuite:
			name = "start the local fleet and hcp-fleet"
		default:
			continue
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\n", s.RunTime.Round(100*time.Millisecond), s.State, strings.TrimSpace(name))
	}
	fmt.Fprintf(w, "  %s\ttotal\t\n", r.RunTime.Round(100*time.Millisecond))
	_ = w.Flush()
})

// stepTimeout bounds each wait of a step (the machine may be busy).
const stepTimeout = 2 * time.Minute

// eventually polls f until it returns nil, for stepTimeout or the given
// timeout; the failure shows f's last error. (Gomega ignores its default
// timeout when given a context, so it is always explicit here.)
func eventually(ctx context.Context, f func(ctx context.Context) error, timeout ...time.Duration) {
	GinkgoHelper()
	d := stepTimeout
	if len(timeout) > 0 {
		d = timeout[0]
	}
	Eventually(ctx, f).WithTimeout(d).WithPolling(250 * time.Millisecond).Should(Succeed())
}
