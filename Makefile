# gnmic-operator — build, generate, test, run.
# `make help` lists the targets.

IMG ?= ghcr.io/gnmic-operator/gnmic-operator:v0.1.0
VERSION ?= 0.1.0

# Go runs with the toolchain installed here; some dependencies ask for newer ones that cannot be fetched.
export GOTOOLCHAIN := local

LOCALBIN ?= $(CURDIR)/bin
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen
KUSTOMIZE ?= $(LOCALBIN)/kustomize
CRD_REF_DOCS ?= $(LOCALBIN)/crd-ref-docs

CONTROLLER_TOOLS_VERSION ?= v0.23.0
KUSTOMIZE_VERSION ?= v5.8.1
CRD_REF_DOCS_VERSION ?= v0.3.0

# Kubernetes control-plane binaries for the test suites (see hack/control-plane.sh).
K8S_VERSION ?= 1.37.2
export K8S_VERSION

SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate CRDs, RBAC and docs/api.md from the API types and markers.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd paths="./api/..." paths="./controllers/..." output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	$(MAKE) --no-print-directory api-docs

.PHONY: api-docs
api-docs: crd-ref-docs ## Generate docs/api.md from the API types.
	$(CRD_REF_DOCS) --source-path=./api --config=hack/api-docs/config.yaml --renderer=markdown --output-path=docs/api.md >/dev/null

.PHONY: generate
generate: controller-gen ## Generate DeepCopy methods.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: fmt
fmt: ## Run gofmt on the code.
	gofmt -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: verify
verify: manifests generate helm-chart ## Fail when generated files (the Helm chart too) are stale or code is not gofmt-ed.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	@git diff --exit-code -- api config docs/api.md $(HELM_CHART) docs/helm.md || { echo "generated files are stale: run 'make manifests generate helm-chart' and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- api config docs/api.md $(HELM_CHART) docs/helm.md)" || { echo "generated files are untracked:"; git status --porcelain -- api config docs/api.md $(HELM_CHART) docs/helm.md; exit 1; }

.PHONY: test
test: manifests generate vet control-plane test-alerts ## Run every unit and envtest suite against a real kube-apiserver, and the alerts' tests.
	KUBEBUILDER_ASSETS="$$(hack/control-plane.sh envtest | tail -n 1)" go test ./... -count=1 -timeout 30m

# The alerts of config/prometheus, written as a rules file for promtool (docs/monitoring.md).
ALERTS_DIR ?= $(LOCALBIN)/alerts

.PHONY: test-alerts
test-alerts: promtool ## promtool check and unit-test the alerts; check every alert and dashboard query against the operator's metrics.
	@mkdir -p $(ALERTS_DIR)
	cd test/monitoring && go run ./cmd/rulesfile ../../config/prometheus/alerts.yaml >$(ALERTS_DIR)/gnmic-operator.rules.yaml
	cp test/monitoring/alerts_test.yaml $(ALERTS_DIR)/alerts_test.yaml
	"$$(hack/promtool.sh 2>/dev/null | tail -n 1)" check rules $(ALERTS_DIR)/gnmic-operator.rules.yaml
	"$$(hack/promtool.sh 2>/dev/null | tail -n 1)" test rules $(ALERTS_DIR)/alerts_test.yaml
	cd test/monitoring && go vet ./... && go test ./... -count=1

.PHONY: promtool
promtool: ## Provide promtool (built once from the Go module proxy, cached in ~/.cache/gnmic-operator).
	hack/promtool.sh >/dev/null

.PHONY: control-plane
control-plane: ## Provide kube-apiserver, etcd, kube-controller-manager, kube-scheduler, kwok, kubectl (cached).
	hack/control-plane.sh all >/dev/null

##@ Build

.PHONY: build
build: manifests generate fmt vet ## Build the operator binary.
	go build -o bin/manager .

# The operator's namespace for `make run`: the metrics API keeps its certificate Secret there.
RUN_NAMESPACE ?= gnmic-operator-system
KUBECTL ?= kubectl

.PHONY: run
run: manifests generate fmt vet ## Run the operator on this machine against the cluster of the current kubeconfig (after make install).
	@# The metrics API serves on this machine, so no APIService may point the cluster at it: a process
	@# outside the cluster is unreachable for the aggregation layer and would break discovery.
	$(KUBECTL) get namespace $(RUN_NAMESPACE) >/dev/null 2>&1 || $(KUBECTL) create namespace $(RUN_NAMESPACE)
	POD_NAMESPACE=$(RUN_NAMESPACE) go run . --leader-elect=false --metrics-api-manage-apiservices=false

.PHONY: docker-build
docker-build: ## Build the operator image (needs a Docker engine).
	docker build -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push the operator image.
	docker push $(IMG)

##@ Deployment

ifndef ignore-not-found
  ignore-not-found = false
endif

.PHONY: install
install: manifests kustomize ## Install the CRDs into the cluster of the current kubeconfig.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) apply --server-side -f -

.PHONY: uninstall
uninstall: manifests kustomize ## Remove the CRDs from the cluster. ignore-not-found=true ignores missing ones.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) delete --ignore-not-found=$(ignore-not-found) -f -

.PHONY: deploy
deploy: manifests kustomize ## Deploy the operator (image IMG) to the cluster of the current kubeconfig.
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG)
	$(KUSTOMIZE) build config/default | $(KUBECTL) apply --server-side -f -

.PHONY: undeploy
undeploy: kustomize ## Remove the operator from the cluster. ignore-not-found=true ignores missing ones.
	$(KUSTOMIZE) build config/default | $(KUBECTL) delete --ignore-not-found=$(ignore-not-found) -f -

include hack/e2e.mk
include hack/helm.mk
include hack/consul.mk

##@ Tools

$(LOCALBIN):
	mkdir -p $(LOCALBIN)

.PHONY: controller-gen
controller-gen: $(LOCALBIN) ## Install controller-gen into bin/.
	$(call go-install-tool,$(CONTROLLER_GEN),sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_TOOLS_VERSION))

.PHONY: kustomize
kustomize: $(LOCALBIN) ## Install kustomize into bin/.
	$(call go-install-tool,$(KUSTOMIZE),sigs.k8s.io/kustomize/kustomize/v5,$(KUSTOMIZE_VERSION))

.PHONY: crd-ref-docs
crd-ref-docs: $(LOCALBIN) ## Install crd-ref-docs into bin/.
	$(call go-install-tool,$(CRD_REF_DOCS),github.com/elastic/crd-ref-docs,$(CRD_REF_DOCS_VERSION))

# go-install-tool installs package $2 at version $3 as $1-$3 and links $1 to it, so a version bump reinstalls.
define go-install-tool
@[ -f "$(1)-$(3)" ] && [ "$$(readlink -- "$(1)")" = "$$(basename -- "$(1)-$(3)")" ] || { \
set -e; \
echo "installing $(2)@$(3)"; \
rm -f "$(1)"; \
GOBIN="$(LOCALBIN)" go install $(2)@$(3); \
mv "$(LOCALBIN)/$$(basename "$(1)")" "$(1)-$(3)"; \
ln -sf "$$(basename -- "$(1)-$(3)")" "$(1)"; \
}
endef

include hack/olm.mk

.PHONY: verify-bundle
verify-bundle: bundle ## Fail when bundle/ is stale: regenerate it and compare with what is committed.
	@git diff --exit-code -- bundle bundle.Dockerfile config/manifests config/scorecard config/manager || { echo "bundle/ is stale: run 'make bundle' and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- bundle bundle.Dockerfile config/manifests config/scorecard)" || { echo "bundle files are untracked:"; git status --porcelain -- bundle bundle.Dockerfile config/manifests config/scorecard; exit 1; }

# Not part of `make test`: the profile of docs/fleet.md's "What a reconcile costs at scale".
PROFILE_TARGETS ?= 5000
.PHONY: profile-reconcile
profile-reconcile: control-plane | $(LOCALBIN) ## Profile reconciles of a steady Cluster of PROFILE_TARGETS targets (envtest); prints the top entries.
	KUBEBUILDER_ASSETS="$$(hack/control-plane.sh envtest | tail -n 1)" PROFILE_TARGETS=$(PROFILE_TARGETS) \
		PROFILE_OUT=$(CURDIR)/bin/reconcile-$(PROFILE_TARGETS).pprof GOTOOLCHAIN=local \
		go test ./controllers/ -count=1 -timeout 60m -v -ginkgo.v -ginkgo.timeout=60m -ginkgo.focus='Profile of a steady'
	GOTOOLCHAIN=local go tool pprof -top -cum -nodecount=40 bin/reconcile-$(PROFILE_TARGETS).pprof 2>/dev/null | head -32

# Not part of `make test`: the acceptance figures of docs/target-sources.md (a NetBox of TARGETSOURCE_DEVICES
# devices: first sync, 100 changed, removals, a failed and a truncated answer), timings and Target writes.
TARGETSOURCE_DEVICES ?= 10000
.PHONY: bench-targetsource
bench-targetsource: control-plane | $(LOCALBIN) ## Sync a NetBox of TARGETSOURCE_DEVICES devices through changes, removals, failures (envtest); prints timings and writes.
	KUBEBUILDER_ASSETS="$$(hack/control-plane.sh envtest | tail -n 1)" TARGETSOURCE_DEVICES=$(TARGETSOURCE_DEVICES) GOTOOLCHAIN=local \
		TARGETSOURCE_KUBE_API_QPS=$(TARGETSOURCE_KUBE_API_QPS) TARGETSOURCE_KUBE_API_BURST=$(TARGETSOURCE_KUBE_API_BURST) \
		go test ./controllers/targetsource/ -count=1 -timeout 30m -v -ginkgo.v -ginkgo.focus='over a NetBox inventory' \
		> $(LOCALBIN)/bench-targetsource.log 2>&1; status=$$?; \
		grep -E '^\s*bench:|Ran [0-9]+ of|^(ok|FAIL)' $(LOCALBIN)/bench-targetsource.log | sed 's/^\s*//'; exit $$status

# Not part of `make test`: the figures of the budgets in docs/security.md. Each hostile answer (a gzip body
# inflating to 1 GiB, 10 million records, CEL at its cost limit on every record, a slowloris inventory, a 1 GiB
# push) goes through the operator's code path; prints the reason each fails with and the peak RSS meanwhile.
.PHONY: bench-budgets
bench-budgets: control-plane | $(LOCALBIN) ## Sync hostile inventories (envtest) and post a 1 GiB push; prints the budget each hits and the peak RSS.
	KUBEBUILDER_ASSETS="$$(hack/control-plane.sh envtest | tail -n 1)" BENCH_BUDGETS=1 GOTOOLCHAIN=local \
		go test ./controllers/targetsource/ -count=1 -timeout 30m -v -ginkgo.v -ginkgo.focus='Budgets bench' \
		> $(LOCALBIN)/bench-budgets.log 2>&1; status=$$?; \
	BENCH_BUDGETS=1 GOTOOLCHAIN=local go test ./pushendpoint/ -count=1 -run '^TestBenchBudgetsPush$$' -v \
		>> $(LOCALBIN)/bench-budgets.log 2>&1 || status=1; \
	grep -E '^\s*bench:|Ran [0-9]+ of|^(ok|FAIL)' $(LOCALBIN)/bench-budgets.log | sed 's/^\s*//'; exit $$status

# Not part of test-e2e (build tag scale): the figures of docs/fleet.md's bulk-arrival table.
BULK_TARGETS ?= 5000
BULK_PODS ?= 10
.PHONY: bench-bulk
bench-bulk: e2e-binaries ## Measure BULK_TARGETS Targets created at once onto BULK_PODS pods: time to collected, operator CPU.
	E2E_OPERATOR_BINARY=$(LOCALBIN)/manager BULK_TARGETS=$(BULK_TARGETS) BULK_PODS=$(BULK_PODS) GOTOOLCHAIN=local \
		go test -tags e2e,scale ./test/e2e/ -count=1 -timeout 30m -v -ginkgo.focus='Bulk arrival' $(E2E_ARGS)

# Not part of `make test-e2e`: the sharding figures of docs/sharding.md (a singleton, then 3 sharded replicas,
# over SHARD_BENCH_CLUSTERS Clusters of SHARD_BENCH_TARGETS targets on SHARD_BENCH_PODS pods each).
SHARD_BENCH_CLUSTERS ?= 500
SHARD_BENCH_TARGETS ?= 100
SHARD_BENCH_PODS ?= 2
.PHONY: bench-sharding
bench-sharding: e2e-binaries ## Singleton vs 3 sharded replicas over one fleet: convergence from cold, steady CPU, peak RSS, API requests.
	E2E_OPERATOR_BINARY=$(LOCALBIN)/manager SHARD_BENCH_CLUSTERS=$(SHARD_BENCH_CLUSTERS) SHARD_BENCH_TARGETS=$(SHARD_BENCH_TARGETS) \
		SHARD_BENCH_PODS=$(SHARD_BENCH_PODS) GOTOOLCHAIN=local \
		go test -tags e2e,scale ./test/e2e/sharding/ -run TestShardingScale -count=1 -timeout 200m -v

# Not part of `make test-e2e`: the sharding suite of test-e2e (3 replicas joined by a 4th, killed, paused,
# rolled) over the fleet of docs/sharding.md's acceptance, 300 Clusters of 1–200 targets (about 30,000).
SHARDING_CLUSTERS ?= 300
SHARDING_MAX_TARGETS ?= 200
.PHONY: test-sharding-fleet
test-sharding-fleet: e2e-binaries ## The sharding e2e suite over SHARDING_CLUSTERS Clusters of 1–SHARDING_MAX_TARGETS targets.
	E2E_OPERATOR_BINARY=$(LOCALBIN)/manager KUSTOMIZE=$(KUSTOMIZE) E2E_POD_CIDR=$(E2E_POD_CIDR) \
		SHARDING_CLUSTERS=$(SHARDING_CLUSTERS) SHARDING_MAX_TARGETS=$(SHARDING_MAX_TARGETS) GOTOOLCHAIN=local \
		go test -tags e2e ./test/e2e/sharding/ -run '^TestSharding$$' -count=1 -timeout 120m -v

# Not part of `make test`: the soak curve of docs/fleet.md.
SOAK_DURATION ?= 1h
.PHONY: soak
soak: control-plane ## An hour (SOAK_DURATION) of target churn, flapping devices and collector restarts with TLS on; heap and goroutines must stay flat.
	KUBEBUILDER_ASSETS="$$(hack/control-plane.sh envtest | tail -n 1)" SOAK_DURATION=$(SOAK_DURATION) GOTOOLCHAIN=local \
		go test ./controllers/ -count=1 -timeout 3h -v -ginkgo.v -ginkgo.timeout=3h -ginkgo.focus='Soak:'
