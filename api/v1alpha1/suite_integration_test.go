//go:build integration

package v1alpha1_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	hcpv1 "github.com/hcp-fleet/hcp-fleet/api/v1alpha1"
	"github.com/hcp-fleet/hcp-fleet/internal/testenv"
	"github.com/hcp-fleet/hcp-fleet/pkg/kubeutil"
)

// The tests of this package run against a real kube-apiserver and etcd (envtest) with
// the CRDs from manifests/crds installed, because what they check — the generated
// schema, its CEL rules, defaulting and pruning — only the apiserver evaluates.
var (
	k8s    client.Client
	scheme = runtime.NewScheme()
)

const (
	repoRoot     = "../.."
	crdDir       = repoRoot + "/manifests/crds"
	examplesDir  = repoRoot + "/examples"
	ocmHubCRDDir = repoRoot + "/internal/localfleet/crds/hub"
	fieldOwner   = "hcp-fleet-api-test"
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	for _, add := range []func(*runtime.Scheme) error{hcpv1.AddToScheme, corev1.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	cfg, stop, err := testenv.StartMain(testenv.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
	}()
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Our CRDs are installed the way a cluster admin or an OLM bundle would, by
	// server-side apply: that also proves the large HostedClusterDeployment CRD fits
	// (its managedFields included) within the apiserver's request and object limits.
	// The OCM hub CRDs are there so the Placement in examples/ can be applied too.
	if err := installCRDs(crdDir, ocmHubCRDDir); err != nil {
		fmt.Fprintln(os.Stderr, "installing CRDs:", err)
		return 1
	}
	return m.Run()
}

func installCRDs(dirs ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var names []string
	for _, dir := range dirs {
		objs, err := readObjects(dir)
		if err != nil {
			return err
		}
		if len(objs) == 0 {
			return fmt.Errorf("no CRDs in %s", dir)
		}
		for _, u := range objs {
			if err := k8s.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
				return fmt.Errorf("server-side apply of %s: %w", u.GetName(), err)
			}
			names = append(names, u.GetName())
		}
	}
	for _, name := range names {
		var crd apiextensionsv1.CustomResourceDefinition
		err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			if err := k8s.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
				return false, err
			}
			return kubeutil.Established(&crd), nil
		})
		if wait.Interrupted(err) {
			return fmt.Errorf("CRD %s not established: %v", name, crd.Status.Conditions)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// readObjects reads every object of every .yaml file in dir, in file name order.
func readObjects(dir string) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, f := range files {
		fileObjs, err := readFile(f)
		if err != nil {
			return nil, err
		}
		objs = append(objs, fileObjs...)
	}
	return objs, nil
}

func readFile(file string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		objs = append(objs, u)
	}
}

// mustObject parses one YAML object.
func mustObject(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatalf("parsing test object: %v", err)
	}
	return u
}

// ensureNamespace creates a namespace for one test.
func ensureNamespace(t *testing.T, name string) {
	t.Helper()
	ns := &corev1.Namespace{}
	ns.Name = name
	if err := k8s.Create(context.Background(), ns); client.IgnoreAlreadyExists(err) != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
}
