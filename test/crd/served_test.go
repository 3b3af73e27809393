package crd_test

import (
	"context"
	"encoding/json"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/test/testenv"
)

func typedClient() client.Client {
	s := runtime.NewScheme()
	Expect(operatorv1alpha1.AddToScheme(s)).To(Succeed())
	Expect(apiextensionsv1.AddToScheme(s)).To(Succeed())
	c, err := client.New(cfg, client.Options{Scheme: s})
	Expect(err).NotTo(HaveOccurred())
	return c
}

var _ = Describe("Served APIs", func() {
	It("serves every kind of operator.gnmic.dev/v1alpha1 with a status subresource where it has status", func() {
		dc, err := discovery.NewDiscoveryClientForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		list, err := dc.ServerResourcesForGroupVersion("operator.gnmic.dev/v1alpha1")
		Expect(err).NotTo(HaveOccurred())
		var names []string
		for _, r := range list.APIResources {
			names = append(names, r.Name)
		}
		for _, gvr := range testenv.CRDResources() {
			Expect(names).To(ContainElement(gvr.Resource))
		}
		Expect(names).To(ContainElements("clusters/status", "clusters/scale", "targets/status", "pipelines/status",
			"outputs/status", "inputs/status", "processors/status"))
	})

	It("declares the printer columns kubectl shows", func() {
		want := map[string][]string{
			"clusters":       {"Image", "Replicas", "Ready", "Pipelines", "Targets", "Unassigned", "Subs", "Inputs", "Outputs", "Processors", "Age", "Operator"},
			"targets":        {"Address", "Profile", "Clusters", "State", "Age", "Weight"},
			"targetprofiles": {"Credentials", "Timeout", "Age"},
			"subscriptions":  {"Mode", "Sample", "Encoding", "Age"},
			"outputs":        {"Type", "Accepted", "Running", "Age"},
			"inputs":         {"Type", "Accepted", "Age"},
			"processors":     {"Type", "In Use", "Age"},
			"pipelines":      {"Cluster", "Enabled", "Targets", "Subs", "Outputs", "Inputs", "Processors", "Age"},
		}
		for plural, columns := range want {
			var crd apiextensionsv1.CustomResourceDefinition
			Expect(typedClient().Get(ctx, client.ObjectKey{Name: plural + ".operator.gnmic.dev"}, &crd)).To(Succeed())
			var got []string
			for _, c := range crd.Spec.Versions[0].AdditionalPrinterColumns {
				got = append(got, c.Name)
			}
			Expect(got).To(Equal(columns), "printer columns of %s", plural)
		}
	})

	It("renders a Cluster as the table kubectl get prints", func() {
		Expect(k8sClient.Create(ctx, object("Cluster", "table", "image: ghcr.io/openconfig/gnmic:0.47.0\nreplicas: 2"))).To(Succeed())
		table := serverTable(ctx, schema.GroupVersionResource{Group: "operator.gnmic.dev", Version: "v1alpha1", Resource: "clusters"}, "table")
		var headers []string
		for _, c := range table.ColumnDefinitions {
			headers = append(headers, c.Name)
		}
		// Operator (the replica of a sharded operator) has priority 1: kubectl shows it with -o wide only.
		Expect(headers).To(Equal([]string{"Name", "Image", "Replicas", "Ready", "Pipelines", "Targets", "Unassigned", "Subs", "Inputs", "Outputs", "Processors", "Age", "Operator"}))
		Expect(table.ColumnDefinitions[len(headers)-1].Priority).To(BeEquivalentTo(1))
		Expect(table.Rows).To(HaveLen(1))
		Expect(table.Rows[0].Cells[:3]).To(Equal([]any{"table", "ghcr.io/openconfig/gnmic:0.47.0", float64(2)}))
	})
})

// serverTable asks the apiserver for the server-side table of one object, as kubectl get does.
func serverTable(ctx context.Context, gvr schema.GroupVersionResource, name string) metav1.Table {
	cs, err := kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	raw, err := cs.RESTClient().Get().
		AbsPath("apis", gvr.Group, gvr.Version, "namespaces", namespace, gvr.Resource, name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").
		DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred())
	var table metav1.Table
	Expect(json.Unmarshal(raw, &table)).To(Succeed())
	return table
}
