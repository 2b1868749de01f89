package kubeletsim

import (
	"reflect"
	"testing"
)

func TestRepository(t *testing.T) {
	for in, want := range map[string]string{
		"quay.io/hcp-fleet/agent:v1":                "quay.io/hcp-fleet/agent",
		"quay.io/hcp-fleet/agent@sha256:abc":        "quay.io/hcp-fleet/agent",
		"localhost:5000/agent:latest":               "localhost:5000/agent",
		"localhost:5000/agent":                      "localhost:5000/agent",
		"agent":                                     "agent",
		"registry:5000/a/b:tag@sha256:0123456789ab": "registry:5000/a/b",
	} {
		if got := Repository(in); got != want {
			t.Errorf("Repository(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRewriteMountPaths(t *testing.T) {
	mounts := map[string]string{"/var/run/hub": "/tmp/p/hub", "/var/run/hub/extra": "/tmp/p/extra"}
	got := rewriteMountPaths([]string{
		"--hub-kubeconfig=/var/run/hub/kubeconfig",
		"--x=/var/run/hub/extra/file",
		"/var/run/hub",
		"--other=/var/run/hubble/file", // a different path that shares a prefix
		"--plain",
	}, mounts)
	want := []string{
		"--hub-kubeconfig=/tmp/p/hub/kubeconfig",
		"--x=/tmp/p/extra/file",
		"/tmp/p/hub",
		"--other=/var/run/hubble/file",
		"--plain",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}
