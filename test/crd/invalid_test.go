package crd_test

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const (
	validTarget   = "address: 10.0.0.1:57400\nprofile: p"
	validProfile  = "timeout: 10s"
	validSubPaths = "paths: [/interfaces]"
)

var invalidSeq int

var _ = Describe("Invalid objects", func() {
	DescribeTable("are rejected with a message that names the problem",
		func(kind, spec string, wantMessages ...string) {
			invalidSeq++
			obj := object(kind, fmt.Sprintf("invalid-%d", invalidSeq), spec)
			err := k8sClient.Create(ctx, obj)
			Expect(err).To(HaveOccurred(), "the apiserver accepted an invalid %s:\n%s", kind, spec)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want 422 Invalid, got %v", err)
			for _, want := range wantMessages {
				Expect(err.Error()).To(ContainSubstring(want))
			}
		},

		// Cluster
		Entry("a Cluster without spec", "Cluster", "", "spec: Required value"),
		Entry("a Cluster without image", "Cluster", "replicas: 1", "spec.image: Required value"),
		Entry("a Cluster with an empty image", "Cluster", `image: ""`, "spec.image in body should be at least 1 chars long"),
		Entry("a Cluster with negative replicas", "Cluster", "image: gnmic\nreplicas: -1",
			"spec.replicas in body should be greater than or equal to 0"),
		Entry("a Cluster with podCapacity 0", "Cluster", "image: gnmic\ntargetDistribution: {podCapacity: 0}",
			"spec.targetDistribution.podCapacity in body should be greater than or equal to 1"),
		Entry("a Cluster with a REST port above 65535", "Cluster", "image: gnmic\napi: {restPort: 70000}",
			"spec.api.restPort in body should be less than or equal to 65535"),
		Entry("a Cluster with a gNMI server port 0", "Cluster", "image: gnmic\napi: {gnmi: {enabled: true, port: 0}}",
			"spec.api.gnmi.port in body should be greater than or equal to 1"),
		Entry("a Cluster whose gNMI Service labels take the operator's", "Cluster",
			"image: gnmic\napi: {gnmi: {enabled: true, service: {labels: {operator.gnmic.dev/cluster: x}}}}",
			"service labels must not set operator.gnmic.dev/ labels"),
		Entry("a Cluster with an unknown pull policy", "Cluster", "image: gnmic\nimagePullPolicy: Sometimes",
			`spec.imagePullPolicy: Unsupported value: "Sometimes"`),
		Entry("a Cluster whose PDB sets both bounds", "Cluster",
			"image: gnmic\npodDisruptionBudget: {minAvailable: 1, maxUnavailable: 1}",
			"set at most one of minAvailable and maxUnavailable"),
		Entry("a Cluster whose pod labels take the operator's label", "Cluster",
			"image: gnmic\npodLabels: {operator.gnmic.dev/cluster: other}",
			"podLabels must not set operator.gnmic.dev/cluster"),
		Entry("a Cluster with a grace period that is not a duration", "Cluster",
			"image: gnmic\ntargetDistribution: {unreadyGracePeriod: soon}",
			"unreadyGracePeriod must be a duration such as 60s or 2m"),
		Entry("a Cluster with a negative grace period", "Cluster",
			"image: gnmic\ntargetDistribution: {unreadyGracePeriod: -5s}",
			"unreadyGracePeriod must be a duration such as 60s or 2m"),
		Entry("a Cluster whose collector certificates live 10 minutes", "Cluster",
			"image: gnmic\napi: {tls: {certificateLifetime: 10m}}",
			"certificateLifetime must be a duration of at least 1h"),
		Entry("a Cluster that opts out of collector API TLS without a reason", "Cluster", "image: gnmic\napi: {insecure: {}}",
			"spec.api.insecure.reason: Required value"),
		Entry("a Cluster that opts out of collector API TLS with a blank reason", "Cluster",
			"image: gnmic\napi: {insecure: {reason: '  '}}", "insecure.reason must say why the collector API runs without TLS"),
		Entry("a Cluster that both tunes and turns off collector API TLS", "Cluster",
			"image: gnmic\napi: {tls: {}, insecure: {reason: lab}}", "set at most one of tls and insecure"),
		Entry("a Cluster with replicas as a string", "Cluster", `image: gnmic
replicas: "three"`, `spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer`),

		// Target
		Entry("a Target without a port", "Target", "address: router1\nprofile: p", "address must be host:port"),
		Entry("a Target on port 0", "Target", "address: 10.0.0.1:0\nprofile: p",
			"the port in address must be between 1 and 65535"),
		Entry("a Target on port 70000", "Target", "address: 10.0.0.1:70000\nprofile: p",
			"the port in address must be between 1 and 65535"),
		Entry("a Target with a six-digit port", "Target", "address: 10.0.0.1:123456\nprofile: p",
			"address must be host:port"),
		Entry("a Target on an IPv6 address without a port", "Target", "address: '[2001:db8::1]'\nprofile: p",
			"address must be host:port"),
		Entry("a Target whose host has a space", "Target", "address: bad host:57400\nprofile: p",
			"address must be host:port"),
		Entry("a Target without a profile", "Target", "address: 10.0.0.1:57400", "spec.profile: Required value"),

		// TargetProfile
		Entry("a TargetProfile retrying every second", "TargetProfile", "retryTimer: 1s",
			"retryTimer must be a duration of at least 2s"),
		Entry("a TargetProfile with a zero timeout", "TargetProfile", "timeout: 0s",
			"timeout must be a positive duration such as 10s"),
		Entry("a TargetProfile with a timeout that is not a duration", "TargetProfile", "timeout: ten",
			"timeout must be a positive duration such as 10s"),
		Entry("a TargetProfile with an unknown encoding", "TargetProfile", "encoding: XML",
			`spec.encoding: Unsupported value: "XML"`),
		Entry("a TargetProfile whose TLS range is inverted", "TargetProfile",
			"tls: {minVersion: '1.3', maxVersion: '1.2'}", "tls.minVersion must not be above tls.maxVersion"),
		Entry("a TargetProfile that skips verification and names a CA", "TargetProfile",
			"tls: {skipVerify: true, secretRef: ca}", "tls.skipVerify and tls.secretRef exclude each other"),
		Entry("a TargetProfile with TLS 1.0", "TargetProfile", "tls: {minVersion: '1.0'}",
			`spec.tls.minVersion: Unsupported value: "1.0"`),

		// Subscription
		Entry("a Subscription without paths", "Subscription", "mode: STREAM/SAMPLE",
			"a subscription needs at least one path"),
		Entry("a Subscription with an empty path list", "Subscription", "paths: []",
			"spec.paths in body should have at least 1 items"),
		Entry("a Subscription with an unknown mode", "Subscription", validSubPaths+"\nmode: SOMETIMES",
			`spec.mode: Unsupported value: "SOMETIMES"`),
		Entry("an on-change Subscription with a sample interval", "Subscription",
			validSubPaths+"\nmode: STREAM/ON_CHANGE\nsampleInterval: 10s", "sampleInterval applies only to the modes"),
		Entry("a ONCE Subscription with a heartbeat", "Subscription",
			validSubPaths+"\nmode: ONCE\nheartbeatInterval: 60s", "heartbeatInterval applies only to STREAM modes"),
		Entry("a Subscription with a sample interval that is not a duration", "Subscription",
			validSubPaths+"\nsampleInterval: fast", "sampleInterval must be a duration such as 10s"),
		Entry("a Subscription with QoS 64", "Subscription", validSubPaths+"\nqos: 64",
			"spec.qos in body should be less than or equal to 63"),
		Entry("a Subscription with a history snapshot, which gNMIc's REST API cannot carry", "Subscription",
			validSubPaths+"\nhistory: {snapshot: '2026-01-01T00:00:00Z'}",
			"spec.history", "history is not supported: gNMIc's REST API cannot carry history times",
			"gnmic subscribe --history-snapshot"),
		Entry("a Subscription with a history range", "Subscription",
			validSubPaths+"\nhistory: {start: '2026-01-01T00:00:00Z', end: '2026-01-02T00:00:00Z'}",
			"spec.history", "history is not supported"),
		Entry("a Subscription with an empty history", "Subscription", validSubPaths+"\nhistory: {}",
			"spec.history", "history is not supported"),
		Entry("a Subscription with both paths and stream subscriptions", "Subscription",
			validSubPaths+"\nstreamSubscriptions: [{paths: [/system]}]", "set either paths or streamSubscriptions, not both"),

		// Output
		Entry("an Output without a type", "Output", "config: {}", "spec.type: Required value"),
		Entry("an Output whose Service is of an unknown type", "Output", "type: prometheus\nservice: {type: ExternalName}",
			`spec.service.type: Unsupported value: "ExternalName"`),
		Entry("an Output whose Service labels take the operator's", "Output",
			"type: prometheus\nservice: {labels: {operator.gnmic.dev/cluster: other}}",
			"service labels must not set operator.gnmic.dev/ labels"),
		Entry("an Output whose ServiceMonitor labels take the operator's", "Output",
			"type: prometheus\nservice: {serviceMonitor: {labels: {operator.gnmic.dev/output-service: x}}}",
			"serviceMonitor labels must not set operator.gnmic.dev/ labels"),
		Entry("an Output whose ServiceMonitor interval is not a Prometheus duration", "Output",
			"type: prometheus\nservice: {serviceMonitor: {interval: soon}}", "spec.service.serviceMonitor.interval in body should match"),
		Entry("an Output of an unknown type", "Output", "type: email", `spec.type: Unsupported value: "email"`),
		Entry("an Output whose config is a list", "Output", "type: file\nconfig: [a, b]",
			`spec.config: Invalid value: "array": spec.config in body must be of type object`),
		Entry("an Output taking a value from a Secret without naming the Secret", "Output",
			"type: kafka\nsecretRefs: [{key: password, secretKeyRef: {key: password}}]", "secretKeyRef.name: Required value"),
		Entry("an Output taking a value from a Secret at a key that is not a config path", "Output",
			"type: kafka\nsecretRefs: [{key: 'sasl..password', secretKeyRef: {name: s, key: password}}]",
			"key must be config keys separated by dots"),
		Entry("an Output taking its type from a Secret", "Output",
			"type: kafka\nsecretRefs: [{key: type, secretKeyRef: {name: s, key: t}}]", "the operator sets type, name, outputs and event-processors"),
		Entry("an Output taking two values for one key", "Output",
			"type: kafka\nsecretRefs: [{key: password, secretKeyRef: {name: a, key: p}}, {key: password, secretKeyRef: {name: b, key: p}}]",
			"Duplicate value"),

		// Input
		Entry("an Input of an unknown type", "Input", "type: file", `spec.type: Unsupported value: "file"`),
		Entry("an Input taking its outputs from a Secret", "Input",
			"type: nats\nsecretRefs: [{key: outputs, secretKeyRef: {name: s, key: o}}]", "the operator sets type, name, outputs and event-processors"),

		Entry("an Output taking its event processors from a Secret", "Output",
			"type: kafka\nsecretRefs: [{key: event-processors, secretKeyRef: {name: s, key: p}}]", "the operator sets type, name, outputs and event-processors"),
		Entry("an Output naming a processor twice", "Output", "type: file\neventProcessors: [a, a]", `spec.eventProcessors[1]: Duplicate value: "a"`),

		// Processor
		Entry("a Processor without a type", "Processor", "config: {value-names: ['.*']}", "spec.type: Required value"),
		Entry("a Processor of a type gNMIc does not register", "Processor", "type: event-frobnicate", `spec.type: Unsupported value: "event-frobnicate"`),
		Entry("a plugin Processor, whose type the collector reads from files", "Processor", "type: event-plugin", `spec.type: Unsupported value: "event-plugin"`),
		Entry("a Processor whose config is a list", "Processor", "type: event-drop\nconfig: [a]", "spec.config in body must be of type object"),

		// Pipeline
		Entry("a Pipeline naming an output processor twice", "Pipeline",
			"clusterRef: c\noutputs: {outputRefs: [o], processorRefs: [a, a]}", `spec.outputs.processorRefs[1]: Duplicate value: "a"`),
		Entry("a Pipeline without a Cluster", "Pipeline", "targetRefs: [r1]\nsubscriptionRefs: [s1]",
			"spec.clusterRef: Required value"),
		Entry("a Pipeline with targets but no subscription", "Pipeline", "clusterRef: c\ntargetRefs: [r1]",
			"a pipeline that selects targets needs at least one subscription"),
		Entry("a Pipeline with inputs but no output", "Pipeline", "clusterRef: c\ninputs: {inputRefs: [kafka]}",
			"a pipeline with inputs needs at least one output"),
		Entry("a Pipeline naming a target twice", "Pipeline",
			"clusterRef: c\ntargetRefs: [r1, r1]\nsubscriptionRefs: [s1]", `spec.targetRefs[1]: Duplicate value: "r1"`),
	)

	It("rejects changing a Pipeline's clusterRef", func() {
		p := object("Pipeline", "moves-cluster", "clusterRef: a\ntargetRefs: [r1]\nsubscriptionRefs: [s1]")
		Expect(k8sClient.Create(ctx, p)).To(Succeed())
		Expect(unstructured.SetNestedField(p.Object, "b", "spec", "clusterRef")).To(Succeed())
		err := k8sClient.Update(ctx, p)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("clusterRef is immutable"))
	})

	It("accepts the objects the rejections above are variations of", func() {
		for kind, spec := range map[string]string{
			"Cluster":       "image: gnmic",
			"Target":        validTarget,
			"TargetProfile": validProfile,
			"Subscription":  validSubPaths,
			"Output":        "type: file\nconfig: {filename: /tmp/out}",
			"Input":         "type: nats\nconfig: {address: 'nats:4222'}",
			"Pipeline":      "clusterRef: c\ntargetRefs: [r1]\nsubscriptionRefs: [s1]",
		} {
			obj := object(kind, "valid-"+strings.ToLower(kind), spec)
			Expect(k8sClient.Create(ctx, obj)).To(Succeed(), "a valid %s was rejected", kind)
		}
	})
})
