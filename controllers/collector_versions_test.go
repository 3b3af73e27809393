package controllers_test

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/controllers/tunnelpolicy"
	"github.com/gnmic-operator/gnmic-operator/internal/gnmic"
	"github.com/gnmic-operator/gnmic-operator/test/fakecollector"
)

// Collectors of gNMIc releases older than the operator needs (docs/collectors.md): the fake answers as each
// release does, read from gNMIc's source at its tag.
var _ = Describe("Collectors of an older gNMIc release", func() {
	const poll = 2 * time.Second
	var op *operator
	BeforeEach(func() {
		op = startOperatorPolling(poll)
		DeferCleanup(op.Stop)
	})

	imageOf := func(release string) string { return gnmic.ImageRepository + ":" + release }
	onRelease := func(replicas int, release string, tune func(*operatorv1alpha1.Cluster)) *fleet {
		return newFleetWith(replicas, func(c *operatorv1alpha1.Cluster) {
			c.Spec.Image = imageOf(release)
			if tune != nil {
				tune(c)
			}
		}, fakecollector.WithRelease(release))
	}
	supported := func(g Gomega, f *fleet) metav1.Condition {
		c := condition(f.cluster(), operatorv1alpha1.ConditionCollectorsSupported)
		g.Expect(c.Type).NotTo(BeEmpty(), "no CollectorsSupported condition")
		return c
	}
	requestsTo := func(col *fakecollector.Collector, method, path string) int {
		n := 0
		for _, r := range col.Requests() {
			if r.Method == method && strings.HasPrefix(r.Path, path) {
				n++
			}
		}
		return n
	}

	It("says a Cluster on gNMIc 0.42 is not supported within a poll, never pushes it, keeps its gates steady, and collects once rolled to 0.47 with no move beyond the roll", func() {
		f := onRelease(2, "0.42.0", nil)
		f.addTargets(0, 6)
		created := time.Now()

		By("reporting CollectorsSupported False, naming the pods, the image and what they lack")
		Eventually(func(g Gomega) {
			c := supported(g, f)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(operatorv1alpha1.ReasonCollectorTooOld))
			for _, want := range []string{"fleet-0, fleet-1", imageOf("0.42.0"), "0.42.x or older", "config apply (0.43.0)",
				"state streams (0.44.0)", "gNMIc 0.47.0 or newer"} {
				g.Expect(c.Message).To(ContainSubstring(want))
			}
			for o := range 2 {
				gate := f.configured(o)
				g.Expect(gate.Status).To(Equal(corev1.ConditionFalse))
				g.Expect(gate.Reason).To(Equal(operatorv1alpha1.ReasonCollectorTooOld))
			}
			cl := f.cluster()
			g.Expect(cl.Status.Collectors).To(HaveLen(2))
			for _, col := range cl.Status.Collectors {
				g.Expect(col.AnswersAs).To(Equal("0.42.x or older"))
				g.Expect(col.MissingFeatures).To(ContainElements("config apply", "state streams", "tunnel-target-matches"))
			}
		}, 4*poll, 100*time.Millisecond).Should(Succeed())
		GinkgoWriter.Printf("CollectorsSupported False %v after the targets were created; message: %s\n",
			time.Since(created).Round(10*time.Millisecond), condition(f.cluster(), operatorv1alpha1.ConditionCollectorsSupported).Message)

		By("pushing nothing, keeping the gates and the placement as they are, and warning once")
		gates := []corev1.PodCondition{f.configured(0), f.configured(1)}
		placed := f.statusPods()
		Expect(placed).To(HaveLen(6))
		for name, pod := range placed {
			Expect(pod).NotTo(BeEmpty(), "target %s is not placed", name)
		}
		probes := []int{requestsTo(f.collectors[0], http.MethodPost, "/api/v1/config/targets/"),
			requestsTo(f.collectors[1], http.MethodPost, "/api/v1/config/targets/")}
		Consistently(func(g Gomega) {
			for o := range 2 {
				g.Expect(requestsTo(f.collectors[o], http.MethodPost, "/api/v1/config/apply")).To(BeZero(), "pod %d was pushed", o)
				g.Expect(requestsTo(f.collectors[o], http.MethodPost, "/api/v1/config/targets/")).To(Equal(probes[o]),
					"pod %d was probed again within a minute", o)
				gate := f.configured(o)
				g.Expect(gate.Message).To(Equal(gates[o].Message))
				g.Expect(gate.LastTransitionTime).To(Equal(gates[o].LastTransitionTime))
			}
			g.Expect(f.statusPods()).To(Equal(placed))
			g.Expect(f.cluster().Status.UnassignedTargets).To(BeZero())
		}, 4*poll, 200*time.Millisecond).Should(Succeed())
		Expect(probes).To(Equal([]int{1, 1}), "each collector process is probed once")
		Expect(f.events(operatorv1alpha1.EventCollectorTooOld)).To(HaveLen(1))
		Expect(f.events(operatorv1alpha1.EventPushFailed)).To(BeEmpty())

		By("rolling the pods to gNMIc 0.47, one at a time, as the StatefulSet does")
		f.updateCluster(func(c *operatorv1alpha1.Cluster) { c.Spec.Image = gnmic.DefaultImage })
		f.image, f.collectorOptions = gnmic.DefaultImage, []fakecollector.Option{fakecollector.WithRelease("0.47.0")}
		var lastReady time.Time
		for _, o := range []int{1, 0} {
			f.removePod(o)
			f.addPod(o)
			lastReady = time.Now()
			Eventually(func() corev1.ConditionStatus { return f.configured(o).Status }, 30*time.Second, 100*time.Millisecond).
				Should(Equal(corev1.ConditionTrue))
		}
		f.converged(6, 0)
		GinkgoWriter.Printf("every target collected %v after the last rolled pod was ready\n", time.Since(lastReady).Round(10*time.Millisecond))
		Expect(time.Since(lastReady)).To(BeNumerically("<", 30*time.Second))
		Expect(f.statusPods()).To(Equal(placed), "a target moved beyond the rolling update's own")
		Eventually(func(g Gomega) {
			c := supported(g, f)
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(Equal(operatorv1alpha1.ReasonCollectorsSupported))
			for _, col := range f.cluster().Status.Collectors {
				g.Expect(col.AnswersAs).To(Equal("0.47.0 or newer"))
				g.Expect(col.MissingFeatures).To(BeEmpty())
			}
			g.Expect(f.events(operatorv1alpha1.EventCollectorsSupported)).To(HaveLen(1))
		}, 4*poll).Should(Succeed())
	})

	It("warns once per image found lacking a feature, not again for each further pod of that image", func() {
		f := onRelease(1, "0.42.0", nil)
		f.addTargets(0, 3)
		Eventually(func(g Gomega) {
			g.Expect(supported(g, f).Status).To(Equal(metav1.ConditionFalse))
			g.Expect(f.events(operatorv1alpha1.EventCollectorTooOld)).To(HaveLen(1))
		}, 4*poll, 100*time.Millisecond).Should(Succeed())

		By("a second pod of the same image: the message names it, the warning is not repeated")
		f.scale(3)
		f.addPod(1)
		Eventually(func(g Gomega) {
			g.Expect(supported(g, f).Message).To(ContainSubstring("pod(s) fleet-0, fleet-1 (image " + imageOf("0.42.0") + ")"))
		}, 4*poll, 100*time.Millisecond).Should(Succeed())
		Consistently(func() []string { return f.events(operatorv1alpha1.EventCollectorTooOld) }, 2*poll, 200*time.Millisecond).
			Should(HaveLen(1))

		By("a pod of another image lacking something else is news")
		f.image, f.collectorOptions = imageOf("0.43.0"), []fakecollector.Option{fakecollector.WithRelease("0.43.0")}
		f.addPod(2)
		Eventually(func(g Gomega) {
			g.Expect(supported(g, f).Message).To(ContainSubstring("pod(s) fleet-2 (image " + imageOf("0.43.0") + ")"))
			g.Expect(f.events(operatorv1alpha1.EventCollectorTooOld)).To(HaveLen(2))
		}, 4*poll, 100*time.Millisecond).Should(Succeed())
	})

	It("says so of a collector whose container exited because its gNMIc has no collect command", func() {
		f := onRelease(1, "0.42.0", nil)
		f.updatePodStatus(0, func(pod *corev1.Pod) {
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse},
				{Type: corev1.ContainersReady, Status: corev1.ConditionFalse}}
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "gnmic", Image: imageOf("0.42.0"), RestartCount: 3,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1,
					Reason: "Error", Message: "Error: unknown command \"collect\" for \"gnmic\"\nRun 'gnmic --help' for usage.\n"}}}}
		})
		Eventually(func(g Gomega) {
			c := supported(g, f)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(operatorv1alpha1.ReasonCollectorTooOld))
			g.Expect(c.Message).To(ContainSubstring(`fleet-0 (image ` + imageOf("0.42.0") + `)`))
			g.Expect(c.Message).To(ContainSubstring(`the container exited: Error: unknown command "collect" for "gnmic"`))
		}, 4*poll).Should(Succeed())
	})

	It("backs off pushing to a collector whose apply answers 404, at most one attempt a minute, and pushes a new container at once", func() {
		f := newFleet(1, nil, "")
		f.collectors[0].FailApply(http.StatusNotFound, "404 page not found")
		f.addTargets(0, 3)
		Eventually(func(g Gomega) {
			c := supported(g, f)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Message).To(ContainSubstring("POST /api/v1/config/apply answered 404"))
			g.Expect(f.configured(0).Reason).To(Equal(operatorv1alpha1.ReasonCollectorTooOld))
		}, 4*poll).Should(Succeed())
		attempts := requestsTo(f.collectors[0], http.MethodPost, "/api/v1/config/apply")
		Expect(attempts).To(Equal(1))
		Consistently(func() int { return requestsTo(f.collectors[0], http.MethodPost, "/api/v1/config/apply") },
			5*poll, 200*time.Millisecond).Should(Equal(1), "an apply was retried within a minute")

		By("a restarted container is a new collector process: probed and pushed at once")
		f.restartContainer(0)
		f.converged(3, 0)
		Eventually(func(g Gomega) { g.Expect(supported(g, f).Status).To(Equal(metav1.ConditionTrue)) }, 4*poll).Should(Succeed())
	})

	It("reports the Outputs of a Cluster whose collectors have no state streams Running False, and takes only the features it uses into account", func() {
		f := onRelease(1, "0.43.0", nil)
		f.addTargets(0, 2)
		Eventually(func(g Gomega) {
			var o operatorv1alpha1.Output
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: "file"}, &o)).To(Succeed())
			running := meta.FindStatusCondition(o.Status.Conditions, operatorv1alpha1.ConditionRunning)
			g.Expect(running).NotTo(BeNil())
			g.Expect(running.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(running.Reason).To(Equal(operatorv1alpha1.ReasonCollectorTooOld))
			g.Expect(running.Message).To(ContainSubstring("Cluster fleet, pod(s) fleet-0"))
			g.Expect(running.Message).To(ContainSubstring("state streams"))
			g.Expect(o.Status.FailedOn).To(HaveLen(1))
			g.Expect(o.Status.FailedOn[0].CollectorTooOld).To(BeTrue())
			c := supported(g, f)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Message).To(ContainSubstring("state streams (0.44.0)"))
			g.Expect(c.Message).NotTo(ContainSubstring("config apply"))
		}, 6*poll).Should(Succeed())

		By("a 0.46 collector has everything a Cluster without tunnels uses")
		g46 := onRelease(1, "0.46.0", nil)
		g46.addTargets(0, 2)
		g46.converged(2, 0)
		Eventually(func(g Gomega) {
			g.Expect(supported(g, g46).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(g46.cluster().Status.Collectors[0].MissingFeatures).To(ConsistOf("tunnel-target-matches"))
		}, 4*poll).Should(Succeed())
	})

	It("reports a TunnelTargetPolicy on collectors whose tunnel-target-matches match nothing Running False, until they run 0.47", func() {
		mgr := newManager(cfg)
		Expect((&tunnelpolicy.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)).To(Succeed())
		policies := runManager(mgr)
		DeferCleanup(policies.Stop)
		f := onRelease(1, "0.46.0", func(c *operatorv1alpha1.Cluster) {
			c.Spec.GRPCTunnel = &operatorv1alpha1.GRPCTunnelSpec{Port: 57401}
		})
		f.addTargets(0, 2)
		p := &operatorv1alpha1.TunnelTargetPolicy{ObjectMeta: metav1.ObjectMeta{Name: "leaves", Namespace: f.ns},
			Spec: operatorv1alpha1.TunnelTargetPolicySpec{ClusterRefs: []string{f.name},
				Match:   operatorv1alpha1.TunnelTargetMatch{Type: "^GNMI_GNOI$", ID: "^leaf-"},
				Profile: "routers", SubscriptionRefs: []string{"counters"}}}
		Expect(k8sClient.Create(suiteCtx, p)).To(Succeed())
		running := func(g Gomega) *metav1.Condition {
			g.Expect(k8sClient.Get(suiteCtx, client.ObjectKeyFromObject(p), p)).To(Succeed())
			c := meta.FindStatusCondition(p.Status.Conditions, operatorv1alpha1.ConditionRunning)
			g.Expect(c).NotTo(BeNil())
			return c
		}
		Eventually(func(g Gomega) {
			c := running(g)
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(c.Reason).To(Equal(operatorv1alpha1.ReasonCollectorTooOld))
			g.Expect(c.Message).To(ContainSubstring("Cluster fleet, pod(s) fleet-0 (gNMIc 0.44.0 to 0.46.x)"))
			g.Expect(c.Message).To(ContainSubstring("0.47.0"))
			s := supported(g, f)
			g.Expect(s.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(s.Message).To(ContainSubstring("tunnel-target-matches (0.47.0)"))
		}, 6*poll).Should(Succeed())

		f.updateCluster(func(c *operatorv1alpha1.Cluster) { c.Spec.Image = gnmic.DefaultImage })
		f.image, f.collectorOptions = gnmic.DefaultImage, nil
		f.removePod(0)
		f.addPod(0)
		Eventually(func(g Gomega) {
			g.Expect(running(g).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(supported(g, f).Status).To(Equal(metav1.ConditionTrue))
		}, 10*poll).Should(Succeed())
	})

	It("says which Output templates call gomplate functions gNMIc 0.46 removed, once as an event, sends the Output anyway, and clears it when rewritten", func() {
		f := onRelease(1, gnmic.DefaultRelease, nil)
		f.addTargets(0, 2)
		f.converged(2, 0)
		Expect(meta.FindStatusCondition(f.output(Default, "file").Status.Conditions, operatorv1alpha1.ConditionTemplatesSupported)).
			To(BeNil(), "an Output without templates carries no such condition")

		setTemplate := func(key, text string) {
			Eventually(func(g Gomega) {
				o := f.output(g, "file")
				if o.Spec.Config == nil {
					o.Spec.Config = map[string]apiextensionsv1.JSON{}
				}
				o.Spec.Config["add-target"] = apiextensionsv1.JSON{Raw: []byte(`"overwrite"`)}
				o.Spec.Config[key] = apiextensionsv1.JSON{Raw: []byte(strconv.Quote(text))}
				g.Expect(k8sClient.Update(suiteCtx, o)).To(Succeed())
			}, 5*time.Second).Should(Succeed())
		}
		setTemplate("target-template", `{{ index . "source" | strings.ToUpper }}`)
		setTemplate("msg-template", `{{ data.ToJSON . }}`)
		Eventually(func(g Gomega) {
			cond := meta.FindStatusCondition(f.output(g, "file").Status.Conditions, operatorv1alpha1.ConditionTemplatesSupported)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Status).To(Equal(metav1.ConditionFalse))
			g.Expect(cond.Reason).To(Equal(operatorv1alpha1.ReasonGomplateRemoved))
			g.Expect(cond.Message).To(ContainSubstring("spec.config.msg-template calls data; spec.config.target-template calls strings"))
			g.Expect(cond.Message).To(ContainSubstring("gNMIc 0.46.0 removed gomplate"))
			last, ok := f.collectors[0].LastApplied()
			g.Expect(ok).To(BeTrue())
			g.Expect(last.Config.Outputs).To(HaveKey("file"), "the collectors' answer decides, not the operator")
			g.Expect(f.eventsOf("Output", "file", operatorv1alpha1.EventGomplateRemoved)).To(ConsistOf(ContainSubstring("calls data")))
		}, 6*poll).Should(Succeed())
		Consistently(func() []string { return f.eventsOf("Output", "file", operatorv1alpha1.EventGomplateRemoved) }, 3*poll).
			Should(HaveLen(1), "one event per change, not per poll")

		By("a template that does not parse on any release")
		setTemplate("msg-template", `{{ if .a }}`)
		Eventually(func(g Gomega) {
			cond := meta.FindStatusCondition(f.output(g, "file").Status.Conditions, operatorv1alpha1.ConditionTemplatesSupported)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Reason).To(Equal(operatorv1alpha1.ReasonGomplateRemoved), "the gomplate call of the other template still counts")
			g.Expect(cond.Message).To(ContainSubstring("spec.config.msg-template does not parse"))
		}, 6*poll).Should(Succeed())

		By("rewriting both with the functions gNMIc 0.46 keeps")
		setTemplate("target-template", `{{ index . "source" | toUpper }}`)
		setTemplate("msg-template", `{{ fromJSON . }}`)
		Eventually(func(g Gomega) {
			cond := meta.FindStatusCondition(f.output(g, "file").Status.Conditions, operatorv1alpha1.ConditionTemplatesSupported)
			g.Expect(cond).NotTo(BeNil())
			g.Expect(cond.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(cond.Message).To(Equal("spec.config.msg-template and spec.config.target-template parse with the functions of gNMIc 0.46.0 and newer"))
		}, 6*poll).Should(Succeed())

		By("removing the templates")
		Eventually(func(g Gomega) {
			o := f.output(g, "file")
			delete(o.Spec.Config, "target-template")
			delete(o.Spec.Config, "msg-template")
			g.Expect(k8sClient.Update(suiteCtx, o)).To(Succeed())
		}, 5*time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(meta.FindStatusCondition(f.output(g, "file").Status.Conditions, operatorv1alpha1.ConditionTemplatesSupported)).To(BeNil())
		}, 6*poll).Should(Succeed())
	})
})
