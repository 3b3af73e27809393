# OLM bundle targets, included from the Makefile (which defines LOCALBIN, KUSTOMIZE, IMG and VERSION).
# The bundle is generated with the Operator SDK exactly as its go/v4 scaffold does; docs/olm.md
# describes the bundle and how to install it.

OPERATOR_SDK_VERSION ?= v1.42.3
OPERATOR_SDK ?= $(LOCALBIN)/operator-sdk

# Channels and default channel of the bundle, e.g. make bundle CHANNELS=alpha DEFAULT_CHANNEL=alpha.
CHANNELS ?= alpha
DEFAULT_CHANNEL ?= alpha
BUNDLE_CHANNELS := $(if $(CHANNELS),--channels=$(CHANNELS))
BUNDLE_DEFAULT_CHANNEL := $(if $(DEFAULT_CHANNEL),--default-channel=$(DEFAULT_CHANNEL))
BUNDLE_METADATA_OPTS ?= $(BUNDLE_CHANNELS) $(BUNDLE_DEFAULT_CHANNEL)
BUNDLE_GEN_FLAGS ?= -q --overwrite --version $(VERSION) $(BUNDLE_METADATA_OPTS)
BUNDLE_IMG ?= $(patsubst %:v$(VERSION),%-bundle:v$(VERSION),$(IMG))

##@ OLM

.PHONY: bundle
bundle: manifests kustomize operator-sdk ## Generate and validate the OLM bundle (bundle/, bundle.Dockerfile) for IMG and VERSION.
	$(OPERATOR_SDK) generate kustomize manifests -q
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG)
	$(KUSTOMIZE) build config/manifests | $(OPERATOR_SDK) generate bundle $(BUNDLE_GEN_FLAGS) --manifests --metadata
	@# generate bundle stamps createdAt with the current time; drop it so that the bundle is reproducible.
	sed -i '/^    createdAt: /d' bundle/manifests/gnmic-operator.clusterserviceversion.yaml
	$(OPERATOR_SDK) bundle validate ./bundle

.PHONY: bundle-validate
bundle-validate: operator-sdk ## Validate bundle/ with the OperatorHub, good-practices and deprecated-API suites too.
	$(OPERATOR_SDK) bundle validate ./bundle --select-optional suite=operatorframework --optional-values=k8s-version=1.37

.PHONY: bundle-build
bundle-build: ## Build the bundle image BUNDLE_IMG (needs a Docker engine).
	docker build -f bundle.Dockerfile -t $(BUNDLE_IMG) .

.PHONY: bundle-push
bundle-push: ## Push the bundle image BUNDLE_IMG.
	docker push $(BUNDLE_IMG)

.PHONY: operator-sdk
operator-sdk: ## Build operator-sdk (OPERATOR_SDK_VERSION) into bin/ from the Go module proxy.
	@OPERATOR_SDK_VERSION=$(OPERATOR_SDK_VERSION) hack/operator-sdk.sh $(LOCALBIN)

# The OLM end-to-end suite (test/e2e/olm): Operator Lifecycle Manager v0 (olm-operator and catalog-operator,
# OLM_VERSION) and opm (OPM_VERSION) run as local processes against the control plane of the e2e harness;
# hack/olm.sh builds them from the Go module proxy and caches them. The suite installs bundle/ (0.1.0) from
# a file-based catalog served by opm, then upgrades to OLM_UPGRADE_VERSION, the bundle `make bundle` makes
# for that version. docs/olm.md describes what it proves.
OLM_VERSION ?= v0.38.0
OPM_VERSION ?= v1.59.0
OLM_UPGRADE_VERSION ?= 0.1.1
OLM_UPGRADE_IMG ?= $(patsubst %:v$(VERSION),%:v$(OLM_UPGRADE_VERSION),$(IMG))
# Where the upgrade bundle is written (gitignored with bin/).
OLM_BUNDLES ?= $(LOCALBIN)/olm-bundles
OLM_TIMEOUT ?= 30m
# Extra `go test` arguments for the OLM suite, for example OLM_ARGS='-ginkgo.focus=OwnNamespace'.
OLM_ARGS ?=
# The OLM suite's pod IP range: another than the e2e suite's and the demo's, so that they can run at once.
OLM_POD_CIDR ?= 127.3.0.0/16

.PHONY: olm
olm: ## Build OLM v0 (olm, catalog; OLM_VERSION) and opm (OPM_VERSION) into bin/ from the Go module proxy (cached).
	@OLM_VERSION=$(OLM_VERSION) OPM_VERSION=$(OPM_VERSION) hack/olm.sh $(LOCALBIN)

# `make bundle` regenerates config/manifests and rewrites config/manager's image and bundle.Dockerfile as well
# as bundle/, so the upgrade bundle is made by the same target in a copy of the working tree (tracked and
# untracked files, without what .gitignore ignores), with this checkout's tools. The tree stays untouched.
.PHONY: olm-upgrade-bundle
olm-upgrade-bundle: kustomize operator-sdk controller-gen crd-ref-docs ## Generate the OLM_UPGRADE_VERSION bundle (make bundle in a copy of the tree) into bin/olm-bundles/.
	@tmp="$$(mktemp -d)"; trap 'rm -rf "$$tmp"' EXIT; \
	git ls-files -z --cached --others --exclude-standard | \
		tar --null --files-from=- --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$$tmp"; \
	echo "make bundle VERSION=$(OLM_UPGRADE_VERSION) IMG=$(OLM_UPGRADE_IMG) (in a copy of the tree)"; \
	$(MAKE) -C "$$tmp" --no-print-directory bundle VERSION=$(OLM_UPGRADE_VERSION) IMG=$(OLM_UPGRADE_IMG) \
		LOCALBIN=$(LOCALBIN) >"$$tmp/make-bundle.log" 2>&1 || { cat "$$tmp/make-bundle.log"; exit 1; }; \
	rm -rf $(OLM_BUNDLES)/$(OLM_UPGRADE_VERSION) && mkdir -p $(OLM_BUNDLES) && \
	cp -R "$$tmp/bundle" $(OLM_BUNDLES)/$(OLM_UPGRADE_VERSION)

# One control plane with OLM and the operator's pods on it; its state and logs stay in .e2e/olm/ until the
# next run.
.PHONY: test-olm
test-olm: olm e2e-binaries olm-upgrade-bundle ## Install, upgrade and uninstall the bundle through a real OLM v0 on a local control plane.
	GOTOOLCHAIN=local go vet -tags e2e ./test/e2e/olm/
	rm -rf $(E2E_DIR)/olm
	E2E_STATE_DIR=$(E2E_DIR)/olm E2E_OPERATOR_BINARY=$(LOCALBIN)/manager E2E_OLM_BIN_DIR=$(LOCALBIN) E2E_OLM_BUNDLE=$(CURDIR)/bundle \
		E2E_OLM_UPGRADE_BUNDLE=$(OLM_BUNDLES)/$(OLM_UPGRADE_VERSION) E2E_POD_CIDR=$(OLM_POD_CIDR) GOTOOLCHAIN=local \
		go test -tags e2e ./test/e2e/olm/ -count=1 -timeout $(OLM_TIMEOUT) -v -ginkgo.v $(OLM_ARGS)
