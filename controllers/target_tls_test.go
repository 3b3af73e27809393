package controllers_test

import (
	"bytes"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
)

// tlsDir is where every collector pod finds the TLS files of its targets, whatever they are.
const tlsDir = "/var/run/gnmic/tls"

var _ = Describe("Target TLS material reaches the collectors without rolling them", func() {
	var op *operator
	BeforeEach(func() { op = startOperator() })
	AfterEach(func() { op.Stop() })

	It("adds a target whose profile names a new TLS Secret without changing the pod template", func() {
		f := newFleet(2, nil, "")
		f.addTargets(0, 3)
		f.converged(3, 0)
		before := f.statefulSet()

		files := clientTLSFiles("leaf")
		f.addTLSProfile("leaf", "leaf-tls", files)
		f.addTargetWith("leaf1", "leaf")
		f.converged(4, 0)
		f.templateUnchanged(before, 2*time.Second)

		Eventually(func(g Gomega) {
			g.Expect(f.targetTLSFiles(g)).To(Equal(map[string][]byte{
				"leaf-tls__ca.crt": files["ca.crt"], "leaf-tls__tls.crt": files["tls.crt"], "leaf-tls__tls.key": files["tls.key"],
			}))
		}, 10*time.Second).Should(Succeed())
		sent := f.sentTarget("leaf1")
		Expect(sent).To(HaveKeyWithValue("tls-ca", tlsDir+"/leaf-tls__ca.crt"))
		Expect(sent).To(HaveKeyWithValue("tls-cert", tlsDir+"/leaf-tls__tls.crt"))
		Expect(sent).To(HaveKeyWithValue("tls-key", tlsDir+"/leaf-tls__tls.key"))
	})

	It("copies a rotated certificate into the Cluster's TLS Secret and changes nothing else", func() {
		f := newFleet(2, nil, "")
		f.addTLSProfile("leaf", "leaf-tls", clientTLSFiles("leaf"))
		f.addTargetWith("leaf1", "leaf")
		f.addTargets(0, 2)
		f.converged(3, 0)
		Eventually(func(g Gomega) {
			g.Expect(f.targetTLSFiles(g)).To(HaveKey("leaf-tls__ca.crt"))
		}, 10*time.Second).Should(Succeed())
		before, sent := f.statefulSet(), f.sentTarget("leaf1")
		applies := f.applyCounts()

		rotated := clientTLSFiles("leaf, rotated")
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			s := f.secret("leaf-tls")
			s.Data = rotated
			return k8sClient.Update(suiteCtx, s)
		})).To(Succeed())

		Eventually(func(g Gomega) {
			g.Expect(f.targetTLSFiles(g)).To(Equal(map[string][]byte{
				"leaf-tls__ca.crt": rotated["ca.crt"], "leaf-tls__tls.crt": rotated["tls.crt"], "leaf-tls__tls.key": rotated["tls.key"],
			}))
		}, 10*time.Second).Should(Succeed())
		f.templateUnchanged(before, 2*time.Second)
		Expect(f.sentTarget("leaf1")).To(Equal(sent), "the target's configuration names files, not their content")
		Expect(f.applyCounts()).To(Equal(applies), "configuration pushes for a rotated certificate")
	})

	It("removes a TLS Secret's files once the last target that needs them is gone", func() {
		f := newFleet(2, nil, "")
		f.addTLSProfile("leaf", "leaf-tls", clientTLSFiles("leaf"))
		f.addTLSProfile("spine", "spine-ca", map[string][]byte{"ca.crt": []byte("spine CA")})
		f.addTargetWith("leaf1", "leaf")
		f.addTargetWith("leaf2", "leaf")
		f.addTargetWith("spine1", "spine")
		f.converged(3, 0)
		Eventually(func(g Gomega) {
			g.Expect(f.targetTLSFiles(g)).To(HaveLen(4))
		}, 10*time.Second).Should(Succeed())
		before := f.statefulSet()

		f.deleteTargetNamed("leaf1")
		f.converged(2, 0)
		Consistently(func(g Gomega) {
			g.Expect(f.targetTLSFiles(g)).To(HaveKey("leaf-tls__ca.crt"), "leaf2 still needs them")
		}, time.Second, 200*time.Millisecond).Should(Succeed())

		f.deleteTargetNamed("leaf2")
		f.converged(1, 0)
		Eventually(func(g Gomega) {
			g.Expect(f.targetTLSFiles(g)).To(Equal(map[string][]byte{"spine-ca__ca.crt": []byte("spine CA")}))
		}, 10*time.Second).Should(Succeed())
		f.templateUnchanged(before, time.Second)
	})

	It("skips the targets whose TLS files do not fit in the Cluster's TLS Secret, says why, and collects the others", func() {
		f := newFleet(2, nil, "")
		f.addTargets(0, 2)
		f.addTLSProfile("spine", "spine-ca", map[string][]byte{"ca.crt": []byte("spine CA")})
		f.addTargetWith("spine1", "spine")
		// A Secret holds at most 1 MiB: each of these fits alone, not both.
		bigA, bigB := bytes.Repeat([]byte("a"), 600<<10), bytes.Repeat([]byte("b"), 600<<10)
		f.addTLSProfile("big-a", "big-a", map[string][]byte{"ca.crt": bigA})
		f.addTargetWith("a1", "big-a")
		f.addTLSProfile("big-b", "big-b", map[string][]byte{"ca.crt": bigB})
		f.addTargetWith("b1", "big-b")

		Eventually(func(g Gomega) {
			c := f.cluster()
			g.Expect(c.Status.TargetsCount).To(BeEquivalentTo(5))
			g.Expect(c.Status.SkippedTargets).To(BeEquivalentTo(1))
			st := f.targetState(g, "b1")
			g.Expect(st.State).To(Equal(operatorv1alpha1.TargetSkipped))
			g.Expect(st.Message).To(ContainSubstring(`tls secret "big-b"`))
			g.Expect(st.Message).To(ContainSubstring("1 MiB"))
			var held []string
			for _, names := range f.holdings() {
				held = append(held, names...)
			}
			g.Expect(held).To(ConsistOf(targetName(0), targetName(1), "spine1", "a1"))
			files := f.targetTLSFiles(g)
			g.Expect(files).To(HaveKeyWithValue("big-a__ca.crt", bigA))
			g.Expect(files).To(HaveKeyWithValue("spine-ca__ca.crt", []byte("spine CA")))
			g.Expect(files).NotTo(HaveKey("big-b__ca.crt"))
		}, 20*time.Second).Should(Succeed())
		Eventually(func() []string { return f.events(operatorv1alpha1.EventTargetTLSTooLarge) }, 10*time.Second).
			Should(ContainElement(ContainSubstring(`"big-b"`)))

		// Once big-a's last target is gone, big-b fits.
		f.deleteTargetNamed("a1")
		Eventually(func(g Gomega) {
			g.Expect(f.cluster().Status.SkippedTargets).To(BeZero())
			files := f.targetTLSFiles(g)
			g.Expect(files).To(HaveKeyWithValue("big-b__ca.crt", bigB))
			g.Expect(files).NotTo(HaveKey("big-a__ca.crt"))
		}, 20*time.Second).Should(Succeed())
		f.converged(4, 0)
	})
})

// clientTLSFiles are the files of a TLS Secret with a CA and a client certificate. Rendering checks which
// files a Secret has, not what they hold: any bytes do.
func clientTLSFiles(label string) map[string][]byte {
	return map[string][]byte{
		"ca.crt":  []byte(label + " CA"),
		"tls.crt": []byte(label + " client certificate"),
		"tls.key": []byte(label + " client key"),
	}
}

// addTLSProfile creates a TLS Secret with files and a TargetProfile that names it.
func (f *fleet) addTLSProfile(profile, secret string, files map[string][]byte) {
	Expect(k8sClient.Create(suiteCtx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret, Namespace: f.ns}, Data: files})).To(Succeed())
	Expect(k8sClient.Create(suiteCtx, &operatorv1alpha1.TargetProfile{ObjectMeta: metav1.ObjectMeta{Name: profile, Namespace: f.ns},
		Spec: operatorv1alpha1.TargetProfileSpec{CredentialsRef: "creds", TLS: &operatorv1alpha1.TargetTLS{SecretRef: secret}}})).To(Succeed())
}

// addTargetWith creates a target of the fleet that connects with the profile.
func (f *fleet) addTargetWith(name, profile string) {
	Expect(k8sClient.Create(suiteCtx, &operatorv1alpha1.Target{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: map[string]string{"fleet": f.name}},
		Spec:       operatorv1alpha1.TargetSpec{Address: fmt.Sprintf("%s.example:57400", name), Profile: profile},
	})).To(Succeed())
}

func (f *fleet) deleteTargetNamed(name string) {
	Expect(k8sClient.Delete(suiteCtx, &operatorv1alpha1.Target{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}})).To(Succeed())
}

func (f *fleet) statefulSet() *appsv1.StatefulSet {
	sts := &appsv1.StatefulSet{}
	Eventually(func() error { return k8sClient.Get(suiteCtx, f.key(), sts) }, 10*time.Second).Should(Succeed())
	return sts
}

// templateUnchanged checks, for a while, that the StatefulSet keeps the generation and pod template it had.
func (f *fleet) templateUnchanged(before *appsv1.StatefulSet, during time.Duration) {
	Consistently(func(g Gomega) {
		sts := &appsv1.StatefulSet{}
		g.Expect(k8sClient.Get(suiteCtx, f.key(), sts)).To(Succeed())
		g.Expect(sts.Generation).To(Equal(before.Generation), "the StatefulSet's generation (its pods would roll)")
		g.Expect(sts.Spec.Template).To(Equal(before.Spec.Template))
	}, during, 200*time.Millisecond).Should(Succeed())
}

// targetTLSFiles is the data of the Cluster's target TLS Secret.
func (f *fleet) targetTLSFiles(g Gomega) map[string][]byte {
	s := &corev1.Secret{}
	err := k8sClient.Get(suiteCtx, client.ObjectKey{Namespace: f.ns, Name: f.name + "-target-tls"}, s)
	if apierrors.IsNotFound(err) {
		return nil
	}
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.Labels).To(HaveKeyWithValue(operatorv1alpha1.ClusterLabel, f.name))
	return s.Data
}

// sentTarget is the target's configuration as the collector that holds it last received it.
func (f *fleet) sentTarget(name string) map[string]any {
	for _, col := range f.collectors {
		if applied, ok := col.LastApplied(); ok {
			if t, ok := applied.Config.Targets[name]; ok {
				return t
			}
		}
	}
	Fail("no collector holds target " + name)
	return nil
}

// applyCounts is how many configurations each collector accepted.
func (f *fleet) applyCounts() map[int]int {
	out := map[int]int{}
	for o, col := range f.collectors {
		out[o] = col.ApplyCount()
	}
	return out
}
