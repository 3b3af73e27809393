# End-to-end suite and demo on a local control plane (test/e2e/harness, docs/autoscaling.md).
# Included from the repository's Makefile: `include hack/e2e.mk`. Uses LOCALBIN when the Makefile sets it.

LOCALBIN ?= $(CURDIR)/bin
# State of the demo (certificates, kubeconfig, etcd data, logs, PIDs); gitignored.
E2E_DIR ?= $(CURDIR)/.e2e
E2E_DEMO ?= $(LOCALBIN)/e2e-demo
E2E_TIMEOUT ?= 20m
# Extra `go test` arguments, for example E2E_ARGS='-ginkgo.focus=Burst'. With arguments only the suite runs:
# the harness's own tests (./test/e2e/harness) know no -ginkgo flags.
E2E_ARGS ?=
E2E_PACKAGES ?= $(if $(strip $(E2E_ARGS)),./test/e2e/,./test/e2e/...)
# The install the suite runs the operator from: config/default (what `make deploy` applies) or bundle (the
# CSV's install strategy and the bundle's manifests, as OLM creates them).
E2E_OPERATOR_MANIFESTS ?= config/default
# The suite's pod IP range (loopback); another suite running on the same machine needs another one.
E2E_POD_CIDR ?= 127.1.0.0/16

##@ End to end

# The operator is built as the Dockerfile builds it (static, no C library in the image): the suite runs it
# as its image would run.
.PHONY: e2e-binaries
e2e-binaries: kustomize ## Build the operator (bin/manager, as in the image) and the demo command (bin/e2e-demo); fetch the control plane.
	@mkdir -p $(LOCALBIN)
	CGO_ENABLED=0 GOTOOLCHAIN=local go build -trimpath -ldflags "-s -w" -o $(LOCALBIN)/manager .
	GOTOOLCHAIN=local go build -o $(E2E_DEMO) ./test/e2e/demo
	hack/control-plane.sh all >/dev/null

.PHONY: demo
demo: e2e-binaries ## Run the operator, fake collectors and an autoscaled fleet on a local control plane; watch it settle.
	E2E_OPERATOR_BINARY=$(LOCALBIN)/manager KUSTOMIZE=$(KUSTOMIZE) $(E2E_DEMO) up --dir $(E2E_DIR)/demo

.PHONY: demo-down
demo-down: ## Stop everything `make demo` started.
	@test -x $(E2E_DEMO) || GOTOOLCHAIN=local go build -o $(E2E_DEMO) ./test/e2e/demo
	$(E2E_DEMO) down --dir $(E2E_DIR)/demo

# -p 1: one control plane at a time; two (the suite's and the harness test's) on 2 cores distort the timings
# the scenarios measure.
.PHONY: test-e2e
test-e2e: e2e-binaries ## Run the end-to-end scenarios (real HPA on the operator's metrics); figures in test/e2e/results/.
	GOTOOLCHAIN=local go vet -tags e2e ./test/e2e/...
	E2E_OPERATOR_BINARY=$(LOCALBIN)/manager E2E_OPERATOR_MANIFESTS=$(E2E_OPERATOR_MANIFESTS) E2E_POD_CIDR=$(E2E_POD_CIDR) \
		KUSTOMIZE=$(KUSTOMIZE) GOTOOLCHAIN=local \
		go test -tags e2e $(E2E_PACKAGES) -p 1 -count=1 -timeout $(E2E_TIMEOUT) -v $(E2E_ARGS)
