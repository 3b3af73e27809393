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
