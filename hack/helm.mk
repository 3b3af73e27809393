# The Helm chart, generated from config/ (hack/helmchart), and its test (test/helm). Included from the
# Makefile, which defines LOCALBIN, KUSTOMIZE and VERSION. docs/helm.md describes the chart,
# docs/development.md the generator.

HELM_CHART ?= charts/gnmic-operator
# Optional components of the chart, each off by default behind its value: kustomize directories whose
# objects are ServiceMonitors (monitoring.serviceMonitor.enabled) or PrometheusRules
# (monitoring.prometheusRule.enabled), for example HELM_OPTIONAL=config/prometheus. Empty: the chart has
# neither, nor their values.
HELM_OPTIONAL ?= config/prometheus
# The Helm test's pod IP range: another than the e2e suite's, the demo's and the OLM suite's.
HELM_POD_CIDR ?= 127.4.0.0/16
HELM_TIMEOUT ?= 20m
# Extra `go test` arguments for the Helm test, for example HELM_ARGS='-run TestChartRenders'.
HELM_ARGS ?=

##@ Helm

.PHONY: helm-chart
helm-chart: manifests kustomize ## Generate the Helm chart (charts/gnmic-operator) and docs/helm.md's values table from config/.
	GOTOOLCHAIN=local go run ./hack/helmchart --kustomize $(KUSTOMIZE) --source config/default \
		$(addprefix --optional ,$(HELM_OPTIONAL)) --out $(HELM_CHART) --version $(VERSION) --docs docs/helm.md

# test/helm is a Go module of its own: the Helm SDK (helm.sh/helm/v3, pinned there) brings dependencies the
# operator's go.mod does not need. Its state and logs stay in .e2e/helm/ until the next run.
.PHONY: test-helm
test-helm: helm-chart e2e-binaries ## Render the chart against config/, then install, upgrade and uninstall it with the Helm SDK on a local control plane.
	cd test/helm && GOTOOLCHAIN=local go vet -tags e2e ./...
	rm -rf $(E2E_DIR)/helm
	cd test/helm && E2E_STATE_DIR=$(E2E_DIR)/helm E2E_OPERATOR_BINARY=$(LOCALBIN)/manager KUSTOMIZE=$(KUSTOMIZE) \
		HELM_CHART=$(CURDIR)/$(HELM_CHART) E2E_POD_CIDR=$(HELM_POD_CIDR) GOTOOLCHAIN=local \
		go test -tags e2e . -count=1 -timeout $(HELM_TIMEOUT) -v $(HELM_ARGS)
