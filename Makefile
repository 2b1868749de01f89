# hcp-fleet — see README.md. Everything here needs only a Go toolchain and the
# Go module proxy; tools are pinned in hack/tools/go.mod.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := build

GO        ?= go
TOOLS     := $(GO) tool -modfile=hack/tools/go.mod
# sigs.k8s.io/about-api (pulled in by open-cluster-management.io/ocm) is served by
# the module proxy but unknown to the checksum database; go.sum pins its hash.
export GONOSUMDB := sigs.k8s.io/about-api
# The kube-apiserver/etcd/kube-controller-manager binaries the tests and the
# local fleet use; built once per machine by `make k8s-bins`.
K8S_BINS   = $(shell hack/k8s-bins/build.sh)
TEST_FLAGS ?=
TEST_PKGS  ?= ./...
# Test binaries link without the symbol table and DWARF (-s): the link, most
# of a test binary's build once its packages are compiled, takes about 40%
# less CPU (measured on pkg/hosting/hub's: 18.5 against 11.3 CPU-s), and
# `make test` links 63 of them. Stack traces and panics do not need them
# (the runtime reads its own line tables). `TEST_LDFLAGS=` keeps them, for a
# debugger.
TEST_LDFLAGS ?= -s
# Tests that start etcd, a kube-apiserver or a local fleet live in files with
# the `//go:build integration` constraint (named *_integration_test.go, or
# *bench_test.go for the fleet benchmarks; all of test/); `make test`, vet,
# lint and the benchmarks build with the tag, `make unit` without it.
INTEGRATION := -tags integration

.PHONY: build
build: ## Compile everything and put the binaries in bin/.
	$(GO) build ./...
	$(GO) build -o bin/ ./cmd/...

# Images: `make images` builds them as OCI archives without a container
# engine (hack/images); images/*.Containerfile build the same with one.
IMAGE_REGISTRY ?= quay.io/hcp-fleet
IMAGE_VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
IMAGE_REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
IMAGE_ARCH     ?= $(shell $(GO) env GOARCH)

.PHONY: images
images: ## The hub and agent images as OCI archives in bin/images (podman load -i / skopeo copy oci-archive:).
	@mkdir -p bin/images
	@for c in hub agent; do \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) $(GO) build -trimpath -o bin/images/hcp-fleet-$$c ./cmd/$$c; \
	  $(GO) run -C hack/images . --binary ../../bin/images/hcp-fleet-$$c --name hcp-fleet-$$c --arch $(IMAGE_ARCH) \
	    --ref $(IMAGE_REGISTRY)/hcp-fleet-$$c:$(IMAGE_VERSION) --version $(IMAGE_VERSION) --revision $(IMAGE_REVISION) \
	    --description "hcp-fleet $$c: fleet manager for HyperShift hosted control planes (open-cluster-management add-on)" \
	    --out ../../bin/images/hcp-fleet-$$c.oci.tar; \
	done
	$(GO) run -C hack/images . --verify ../../bin/images/hcp-fleet-hub.oci.tar ../../bin/images/hcp-fleet-agent.oci.tar

# The OLM bundle (bundle/, bundle.Dockerfile), generated from manifests/ and
# examples/ by hack/bundle; a test fails when it is stale. The committed
# bundle uses these defaults.
BUNDLE_VERSION   ?= 0.1.0
BUNDLE_HUB_IMG   ?= quay.io/hcp-fleet/hcp-fleet-hub:v$(BUNDLE_VERSION)
BUNDLE_AGENT_IMG ?= quay.io/hcp-fleet/hcp-fleet-agent:v$(BUNDLE_VERSION)
BUNDLE_CONSOLE_IMG ?= quay.io/hcp-fleet/hcp-fleet-console:v$(BUNDLE_VERSION)

.PHONY: bundle
bundle: ## Generate the OLM bundle (bundle/, bundle.Dockerfile) from manifests/ and examples/.
	$(GO) run ./hack/bundle --version $(BUNDLE_VERSION) --hub-image $(BUNDLE_HUB_IMG) --agent-image $(BUNDLE_AGENT_IMG) --console-image $(BUNDLE_CONSOLE_IMG)

# `make deploy`: manifests/ (kustomize) with the images set, applied
# server-side (the HostedClusterDeployment CRD is too large for a
# client-side apply's annotation) to $(KUBECONFIG)'s cluster, with the
# kubectl `make k8s-bins` builds (kustomize built in) unless KUBECTL is set.
IMG        ?= $(IMAGE_REGISTRY)/hcp-fleet-hub:$(IMAGE_VERSION)
AGENT_IMG  ?= $(IMAGE_REGISTRY)/hcp-fleet-agent:$(IMAGE_VERSION)
CONSOLE_IMG ?= $(IMAGE_REGISTRY)/hcp-fleet-console:$(IMAGE_VERSION)
KUBECTL    ?= $(K8S_BINS)/kubectl
DEPLOY_DIR := bin/deploy

.PHONY: deploy-manifests
deploy-manifests: ## Write the overlay `make deploy` applies to bin/deploy (IMG, AGENT_IMG, CONSOLE_IMG).
	@mkdir -p $(DEPLOY_DIR)
	@hack/deploy/overlay.sh '$(IMG)' '$(AGENT_IMG)' '$(CONSOLE_IMG)' > $(DEPLOY_DIR)/kustomization.yaml

.PHONY: deploy
deploy: deploy-manifests ## Install hcp-fleet on the hub of $KUBECONFIG with kustomize (IMG, AGENT_IMG, CONSOLE_IMG; see docs/install.md).
	$(KUBECTL) apply --server-side --field-manager=hcp-fleet-deploy -k $(DEPLOY_DIR)
	$(KUBECTL) -n hcp-fleet rollout status deployment/hcp-fleet-hub --timeout=5m

.PHONY: undeploy
undeploy: deploy-manifests ## Remove what `make deploy` installed, the agents first (see docs/install.md).
	@# The hub must still run while the add-on goes: it removes the agents
	@# (and their cleanup) and the finalizers of HostedClusterDeployments.
	@if [[ -n "$$($(KUBECTL) get hostedclusterdeployments.hcpfleet.io -A -o name 2>/dev/null)" ]]; then \
	  echo "HostedClusterDeployments exist: delete them first (docs/install.md)"; exit 1; fi
	$(KUBECTL) delete --ignore-not-found --wait=true --timeout=10m clustermanagementaddons.addon.open-cluster-management.io hcp-fleet
	@echo "waiting (up to 10 minutes) for the hcp-fleet ManagedClusterAddOns to go"; for i in $$(seq 120); do \
	  [[ -z "$$($(KUBECTL) get managedclusteraddons.addon.open-cluster-management.io -A --field-selector metadata.name=hcp-fleet -o name)" ]] && exit 0; \
	  sleep 5; done; echo "ManagedClusterAddOns hcp-fleet still exist: see their conditions"; exit 1
	$(KUBECTL) delete --ignore-not-found --wait=true -k $(DEPLOY_DIR)

# The kubectl plugin as release artifacts next to the images: static
# binaries per platform, named as krew and plugin users expect.
PLUGIN_PLATFORMS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64

.PHONY: release-plugin
release-plugin: ## kubectl-hcpfleet for each of PLUGIN_PLATFORMS in bin/release (tar.gz + sha256).
	@mkdir -p bin/release
	@for p in $(PLUGIN_PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; d=bin/release/kubectl-hcpfleet-$$os-$$arch; mkdir -p $$d; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '-s -w' -o $$d/kubectl-hcpfleet ./cmd/kubectl-hcpfleet; \
	  cp LICENSE $$d/ 2>/dev/null || true; \
	  tar -C $$d -czf $$d.tar.gz .; rm -rf $$d; \
	  (cd bin/release && sha256sum kubectl-hcpfleet-$$os-$$arch.tar.gz > kubectl-hcpfleet-$$os-$$arch.tar.gz.sha256); \
	  echo "bin/release/kubectl-hcpfleet-$$os-$$arch.tar.gz"; \
	done

.PHONY: generate
generate: ## Generate deepcopy code and server-side apply configurations for the API types (api/...), and the list of HyperShift references.
	$(TOOLS) controller-gen object applyconfiguration paths=./api/...
	@# Every reference-shaped field of the pinned HyperShift types, for the delivery to classify.
	$(GO) run ./hack/refs -out pkg/hosting/hub/delivery/zz_generated.references.go

HCD_CRD := manifests/crds/hcpfleet.io_hostedclusterdeployments.yaml
HC_CRD  := manifests/crds/hcpfleet.io_hostingconfigs.yaml
HCE_CRD := manifests/crds/hcpfleet.io_hostedclusterextensions.yaml
TP_CRD  := manifests/crds/hcpfleet.io_tenantpolicies.yaml
RR_CRD  := manifests/crds/hcpfleet.io_releaserollouts.yaml
HCI_CRD := manifests/crds/hcpfleet.io_hostedclusterinventories.yaml
HCR_CRD := manifests/crds/hcpfleet.io_hostedclusterrelocations.yaml
HCA_CRD := manifests/crds/hcpfleet.io_hostedclusteradoptions.yaml

.PHONY: manifests
manifests: ## Generate CRDs and docs/api.md (and copy the OCM CRDs the local fleet installs).
	$(TOOLS) controller-gen crd paths=./api/... output:crd:artifacts:config=manifests/crds
	@# Keep HyperShift fields our pinned types do not know, at any depth (see hack/crd).
	$(GO) run ./hack/crd preserve-unknown-fields -file $(HCD_CRD) \
		-path spec.hostedCluster.spec -path 'spec.nodePools[].spec'
	$(GO) run ./hack/crd api-doc -out docs/api.md $(HCD_CRD) $(HC_CRD) $(HCE_CRD) $(TP_CRD) $(RR_CRD) $(HCI_CRD) $(HCR_CRD) $(HCA_CRD)
	@# The HyperShift CRDs the agent installs, generated from the pinned HyperShift API types.
	rm -rf manifests/hypershift && mkdir -p manifests/hypershift
	$(TOOLS) controller-gen crd:crdVersions=v1 \
		paths=github.com/openshift/hypershift/api/hypershift/v1beta1 \
		paths=github.com/openshift/hypershift/api/certificates/v1alpha1 \
		paths=github.com/openshift/hypershift/api/scheduling/v1alpha1 \
		output:crd:dir=manifests/hypershift
	hack/copy-ocm-crds.sh
	@# The CAPI CRDs the agent installs (Standard or Private), from the pinned cluster-api.
	hack/capi/generate.sh
	@# The OpenShift Agent CAPI providers' types, CRDs and test CRDs.
	hack/agentproviders/generate.sh
	@# The OLM bundle carries the CRDs (and the hub's RBAC): keep it current.
	$(MAKE) --no-print-directory bundle

.PHONY: k8s-bins
k8s-bins: ## Build etcd, kube-apiserver, kube-controller-manager into the user cache (once per machine).
	@hack/k8s-bins/build.sh

# OLM's olm-operator (and the InstallPlan steps tool) for test/olm. test/olm
# runs the script itself (instant once built; it waits for a build under
# way), so only test/olm pays for it and `make test` needs no step for it;
# CI builds it ahead, niced, beside the tests.
.PHONY: olm
olm: ## Build OLM's olm-operator for test/olm into the user cache (once per machine; test/olm builds it when missing).
	@hack/olm/build.sh

.PHONY: vet
# go vet with the integration tag sees every file. Without the tag only the
# packages that have integration-tagged files build differently (the
# others' two builds are the same files), so only those are vetted again
# (23 of 118 packages, but the large ones: it saves less than that ratio);
# that still checks that `make unit`'s build compiles.
vet: ## go vet (with the integration tag, and without it where that builds other files) and gofmt.
	$(GO) vet $(INTEGRATION) ./...
	pkgs="$$($(GO) list -f '{{if .IgnoredGoFiles}}{{.ImportPath}}{{end}}' ./...)"; \
	  if [[ -n "$$pkgs" ]]; then $(GO) vet $$pkgs; fi
	$(GO) vet -C hack/images ./...
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [[ -n "$$out" ]]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# TestHostileInputs (pkg/hosting/hub) writes its table of hostile inputs
# here; gotestsum hides a passing test's log, so `make test` prints it after
# the run, whether the run passed or not.
HOSTILE_TABLE := $(CURDIR)/bin/hostile-inputs.txt

# `make unit`: the inner loop. Every test that needs no API server, with no
# KUBEBUILDER_ASSETS and HCPFLEET_NO_APISERVER set, so a test outside the
# integration build that would start one fails and says where it belongs
# (internal/k8sbins). Includes the architecture rule (internal/archcheck).
.PHONY: unit
unit: ## Every test that needs no API server (no fleet, no KUBEBUILDER_ASSETS): the inner loop.
	env -u KUBEBUILDER_ASSETS HCPFLEET_NO_APISERVER=1 $(GO) test -ldflags='$(TEST_LDFLAGS)' $(TEST_FLAGS) $(TEST_PKGS)
	env -u KUBEBUILDER_ASSETS HCPFLEET_NO_APISERVER=1 $(GO) test -C hack/images -ldflags='$(TEST_LDFLAGS)' $(TEST_FLAGS) ./...

# `make verify`: rerun the generators (generate, manifests) and fail if that
# changes the tree (hack/verify.sh); part of `make test`.
.PHONY: verify
verify: ## Rerun `make generate manifests` and fail on a stale, hand-edited or uncommitted generated file.
	@hack/verify.sh "$(MAKE)"

# `go test` starts the test binaries in the order the packages are listed.
# The packages whose tests run longest (bin/test-times.txt after a run) go
# first, so that they do not start last and set the end of the run while
# the other slots sit idle; the rest of ./... fills the other slots.
TEST_FIRST := ./pkg/hosting/hub ./pkg/olm/hub ./pkg/capi/migration ./pkg/hosting/agent/operator \
	./test/e2e ./pkg/addon ./pkg/extension/integration ./pkg/capi/feature
TEST_ORDER  = $(if $(filter ./...,$(TEST_PKGS)),$(TEST_FIRST)) $(TEST_PKGS)
# How many test binaries run at once (go test -p; by default the number of
# cores). With two binaries on two cores the tests keep about 1.45 cores
# busy, but a third one (tried in CI) starved the fleets enough, beside a
# cold run's lint build, for a controller to miss a test's two-minute wait:
# more only where the machine has cores to spare.
TEST_PARALLEL ?= 2
# Every event of the last `make test` (go test -json), for
# hack/test-times.sh: the slowest packages and tests.
TEST_JSON  := $(CURDIR)/bin/test.json

.PHONY: test
test: vet verify ## Generated files current, then unit, integration and end-to-end tests against real kube-apiservers.
	@$(MAKE) --no-print-directory test-run

# `make test-run`: the tests of `make test` without its vet and verify. CI
# (.ci/run) runs this with vet, verify (which writes only a copy of the
# tree) and `make lint` beside it. -vet=off: `make vet` runs the full go
# vet, with the same tag, on the same packages; the subset go test runs by
# default would redo it.
.PHONY: test-run
test-run: ## The tests of `make test` alone (run `make vet verify` first).
	@mkdir -p bin && rm -f $(HOSTILE_TABLE)
	status=0; HCPFLEET_HOSTILE_TABLE=$(HOSTILE_TABLE) KUBEBUILDER_ASSETS="$(K8S_BINS)" $(TOOLS) gotestsum --format testname --jsonfile $(TEST_JSON) -- $(INTEGRATION) -vet=off -p $(TEST_PARALLEL) -timeout 45m -ldflags='$(TEST_LDFLAGS)' $(TEST_FLAGS) $(TEST_ORDER) || status=$$?; \
	  if [[ -f $(HOSTILE_TABLE) ]]; then echo; cat $(HOSTILE_TABLE); fi; \
	  hack/test-times.sh $(TEST_JSON) | tee bin/test-times.txt; exit $$status
	$(GO) test -C hack/images -ldflags='$(TEST_LDFLAGS)' $(TEST_FLAGS) ./...

.PHONY: resilience
resilience: ## The resilience suite (test/resilience): failures injected into one local fleet; prints a table. RESILIENCE_HCDS, RESILIENCE_KILLS, RESILIENCE_OUTAGE, RESILIENCE_SEED size it.
	HCPFLEET_RESILIENCE=1 KUBEBUILDER_ASSETS="$(K8S_BINS)" $(GO) test $(INTEGRATION) ./test/resilience -run '^TestResilience$$' -count=1 -v -timeout 45m -ldflags='$(TEST_LDFLAGS)' $(TEST_FLAGS)

# The console plugin (console/, docs/console.md): a Node.js project apart
# from the Go build, so `go build` and `make test` need no npm. `make console`
# installs the locked dependencies and builds the plugin into console/dist;
# `make console-lint` runs eslint over it (the console plugin template's
# setup: typescript-eslint with types, React, Hooks, jest, Testing Library,
# prettier); `make console-test` runs that, its jest tests, builds the test host
# (console/test/host) and runs test/console: headless Chromium (Debian's
# chromium; CHROMIUM overrides the path) loads the plugin against a local
# fleet as an admin and as a tenant, screenshots in bin/console-screenshots.
# `make console-deps` installs console/node_modules from the lockfile
# (npm ci) and only when the lockfile is newer than the last install (npm
# writes node_modules/.package-lock.json), so CI can start it early in the
# background (it is mostly network) and `make console` reuses it.
CONSOLE_DEPS := console/node_modules/.package-lock.json

$(CONSOLE_DEPS): console/package-lock.json console/package.json
	cd console && npm ci --no-audit --no-fund
	@touch $@

.PHONY: console-deps
console-deps: $(CONSOLE_DEPS) ## Install the console plugin's locked dependencies (npm ci; skipped when current).

.PHONY: console
console: $(CONSOLE_DEPS) ## Build the console plugin into console/dist (npm ci when the lockfile changed, webpack).
	cd console && npm run build

# The console plugin's image: hcp-fleet-console (cmd/console) with the
# plugin's build at /usr/share/hcp-fleet-console. Apart from `make images`,
# which needs no npm; images/console.Containerfile builds the same with a
# container engine (a Node.js stage, then the Go one).
.PHONY: console-image
console-image: console ## The console plugin's image (asset server + console/dist) as an OCI archive in bin/images.
	@mkdir -p bin/images
	CGO_ENABLED=0 GOOS=linux GOARCH=$(IMAGE_ARCH) $(GO) build -trimpath -o bin/images/hcp-fleet-console ./cmd/console
	$(GO) run -C hack/images . --binary ../../bin/images/hcp-fleet-console --name hcp-fleet-console --arch $(IMAGE_ARCH) \
	  --ref $(IMAGE_REGISTRY)/hcp-fleet-console:$(IMAGE_VERSION) --version $(IMAGE_VERSION) --revision $(IMAGE_REVISION) \
	  --description "hcp-fleet console: the OpenShift console plugin's assets, served over HTTPS" \
	  --assets ../../console/dist --assets-path /usr/share/hcp-fleet-console \
	  --out ../../bin/images/hcp-fleet-console.oci.tar
	$(GO) run -C hack/images . --verify ../../bin/images/hcp-fleet-console.oci.tar

.PHONY: console-lint
console-lint: $(CONSOLE_DEPS) ## Lint the console plugin: eslint with the console plugin template's rules, prettier included (npm run lint).
	cd console && npm run lint

.PHONY: console-test
console-test: console console-lint ## The console plugin's lint, jest tests and its browser test against a local fleet (test/console; needs chromium).
	cd console && npm test && npm run build:host
	HCPFLEET_CONSOLE_TEST=1 KUBEBUILDER_ASSETS="$(K8S_BINS)" $(GO) test $(INTEGRATION) ./test/console -run '^TestPluginAsAdminAndTenant$$' -count=1 -v -timeout 30m -ldflags='$(TEST_LDFLAGS)' $(TEST_FLAGS)

# `make bench`: the fleet-scale benchmark on one local fleet (not part of
# `make test`): the hub API server's write floor, a burst through hcp-fleet's
# scheduler and through one Placement per hosted cluster, status latency;
# it ends with one summary line per figure (docs/performance.md). Sizes:
# BENCH_CLUSTERS (default 10), BENCH_HOSTED (default 300); the goal is 20 / 1000.
# Then the hub-only harness (BenchmarkHubOnly): BENCH_HUBONLY sizes as
# HCDs/clusters, the goal 1000/50,5000/100,10000/200. Then the agent binary
# on a management cluster with BENCH_AGENT_HOSTED hosted clusters
# (BenchmarkAgentFootprint). Then BENCH_DRAIN hosted clusters (default 20)
# drained off one management cluster (BenchmarkDrain, the `drain:` line).
# BENCH_LOG=file keeps the controllers' logs.
# BENCH_REPEAT=N runs the full-fleet burst N times on one fleet and prints
# min / median / max per figure. The full-fleet benchmark ends with the
# `upgrade:` line: one ReleaseRollout moves the burst's hosted clusters to a
# new z-stream in waves of BENCH_UPGRADE_WAVE (default 50; BENCH_UPGRADE=0
# skips it).
BENCH_REPEAT       ?= 1
BENCH_CLUSTERS     ?= 10
BENCH_HOSTED       ?= 300
BENCH_HUBONLY      ?= 1000/50,5000/100
BENCH_AGENT_HOSTED ?= 80
BENCH_DRAIN        ?= 20
BENCH_UPGRADE_WAVE ?= 50

.PHONY: bench
bench: ## Fleet-scale benchmark (~20 min at the defaults; BENCH_CLUSTERS, BENCH_HOSTED, BENCH_REPEAT, BENCH_HUBONLY, BENCH_AGENT_HOSTED, BENCH_DRAIN, BENCH_UPGRADE_WAVE); one summary line per figure.
	@# One process each: the CPU and RSS each prints are its process's.
	BENCH_CLUSTERS=$(BENCH_CLUSTERS) BENCH_HOSTED=$(BENCH_HOSTED) BENCH_REPEAT=$(BENCH_REPEAT) BENCH_UPGRADE_WAVE=$(BENCH_UPGRADE_WAVE) KUBEBUILDER_ASSETS="$(K8S_BINS)" \
	  $(GO) test $(INTEGRATION) -run '^$$' -bench '^BenchmarkScheduling$$' -benchtime 1x -timeout 90m ./pkg/hosting/hub/scheduling
	BENCH_HUBONLY=$(BENCH_HUBONLY) KUBEBUILDER_ASSETS="$(K8S_BINS)" \
	  $(GO) test $(INTEGRATION) -run '^$$' -bench '^BenchmarkHubOnly$$' -benchtime 1x -timeout 90m ./pkg/hosting/hub/scheduling
	BENCH_AGENT_HOSTED=$(BENCH_AGENT_HOSTED) KUBEBUILDER_ASSETS="$(K8S_BINS)" \
	  $(GO) test $(INTEGRATION) -run '^$$' -bench '^BenchmarkAgentFootprint$$' -benchtime 1x -timeout 40m ./pkg/cmd/agent
	BENCH_DRAIN=$(BENCH_DRAIN) KUBEBUILDER_ASSETS="$(K8S_BINS)" \
	  $(GO) test $(INTEGRATION) -run '^$$' -bench '^BenchmarkDrain$$' -benchtime 1x -timeout 90m ./pkg/hosting/hub/relocation

.PHONY: bench-micro
bench-micro: ## The other (in-process) benchmarks, e.g. the CAPI proxy's.
	$(GO) test $(INTEGRATION) -run '^$$' -bench . -benchtime 1x -timeout 30m ./pkg/capi/proxy

RUN_FLAGS ?=

.PHONY: run
run: ## The whole product on a local fleet (hub + management clusters); Ctrl-C stops it. RUN_FLAGS="--clusters 4"
	@GO=$(GO) hack/build-progress.sh ./cmd/localfleet bin/localfleet
	@# The kubectl plugin its closing hints use (bin/ on the PATH).
	$(GO) build -o bin/kubectl-hcpfleet ./cmd/kubectl-hcpfleet
	KUBEBUILDER_ASSETS="$(K8S_BINS)" bin/localfleet up $(RUN_FLAGS)

.PHONY: fuzz
fuzz: ## Fuzz the CAPI proxy translators for 60s.
	$(GO) test -run '^$$' -fuzz=FuzzTranslate -fuzztime=60s ./pkg/capi/proxy

# --allow-serial-runners: a second golangci-lint on the machine (another
# checkout's, or a CI job beside this one) waits for the first one's lock
# instead of failing with "parallel golangci-lint is running".
.PHONY: lint
lint: ## golangci-lint (with the integration tag, .golangci.yml).
	$(TOOLS) golangci-lint run --allow-serial-runners ./...

.PHONY: help
help:
	@grep -E '^[a-zA-Z0-9_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "%-12s %s\n", $$1, $$2}'
