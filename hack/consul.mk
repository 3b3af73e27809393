# The TargetSource's consul provider against a real Consul agent (docs/target-sources-consul.md).
# Included from the repository's Makefile: `include hack/consul.mk`.

##@ Consul

.PHONY: consul
consul: ## Provide a consul binary (Consul v1.16.3, built once from the Go module proxy, cached in ~/.cache/gnmic-operator).
	hack/consul.sh >/dev/null

# The tests start `consul agent -dev` themselves (test/consulagent) from the binary in CONSUL; without it they
# skip, which is what `make test` does.
.PHONY: test-consul
test-consul: consul ## Test the consul provider, its preset and the TargetSource controller against a real Consul agent.
	@consul="$$(hack/consul.sh 2>/dev/null | tail -n 1)"; test -x "$$consul" || { echo "no consul binary: hack/consul.sh"; exit 1; }; \
	set -x; \
	CONSUL="$$consul" GOTOOLCHAIN=local go test ./internal/inventory/ -run 'Consul' -count=1 -v && \
	CONSUL="$$consul" KUBEBUILDER_ASSETS="$$(hack/control-plane.sh envtest | tail -n 1)" \
		GOTOOLCHAIN=local go test ./controllers/targetsource/ -count=1 -v -args -ginkgo.focus='Consul'
