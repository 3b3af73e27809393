package cluster

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	operatorv1alpha1 "github.com/gnmic-operator/gnmic-operator/api/v1alpha1"
	"github.com/gnmic-operator/gnmic-operator/internal/clusterplacement"
	"github.com/gnmic-operator/gnmic-operator/internal/loadweight"
)

// measuredLoad is what a Cluster that weighs by Measured remembers of its targets' load: the Meter (samples
// and held weights) and when each collector pod was last scraped. Its forgetting rule: the Meter forgets
// targets no longer selected and samples older than the window; scrapes of pods that no longer exist go
// every reconcile; the whole goes when the Cluster stops weighing by Measured.
type measuredLoad struct {
	meter     *loadweight.Meter
	scrapedAt map[types.UID]time.Time
}

// measuredSettings are the Cluster's spec.targetDistribution.measuredWeights as the Meter takes them.
func measuredSettings(cluster *operatorv1alpha1.Cluster) loadweight.Settings {
	var s loadweight.Settings
	m := cluster.Spec.TargetDistribution.MeasuredWeights
	if m == nil {
		return s
	}
	if m.Window != nil {
		s.Window = m.Window.Duration
	}
	if m.Hysteresis != nil {
		s.Hysteresis = m.Hysteresis.Duration
	}
	s.MaxWeight = int(m.MaxWeight)
	return s
}

// measureWeights, on a Cluster that weighs by Measured, reads the response counters of its ready collectors
// (each at most once per poll interval, over the connection its pushes use), feeds them to the Cluster's
// Meter and replaces the declared weights observe read with the Meter's: each target weighs its declared
// weight until measured, then what its rate says, changed only after the hysteresis; w.responseRates keeps
// the measured rates, for the targets' statuses. A collector that cannot be read is left out: its targets keep
// their weights.
func (r *Reconciler) measureWeights(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world) {
	memory := r.memoryOf(client.ObjectKeyFromObject(cluster))
	if cluster.Spec.TargetDistribution.WeighBy != operatorv1alpha1.WeighByMeasured {
		memory.load = nil
		return
	}
	settings := measuredSettings(cluster)
	if err := settings.Validate(); err != nil {
		log.FromContext(ctx).Error(err, "measured weights: settings refused, defaults used")
		settings = loadweight.Settings{}
	}
	if memory.load == nil {
		memory.load = &measuredLoad{meter: loadweight.NewMeter(settings), scrapedAt: map[types.UID]time.Time{}}
	}
	load := memory.load
	load.meter.Retune(settings)
	r.scrapeResponseCounters(ctx, cluster, w, load)

	reported := map[string]operatorv1alpha1.TargetClusterState{}
	declared := map[string]int{}
	for _, st := range w.selection.Targets {
		reported[st.Target.Name] = st.Target.Status.ClusterStates[cluster.Name]
		declared[st.Target.Name] = clusterplacement.DeclaredWeight(st.Target)
	}
	placeable := w.placeable()
	targets := make([]loadweight.Target, 0, len(placeable))
	for _, name := range placeable {
		targets = append(targets, loadweight.Target{Name: name, Declared: max(declared[name], 1),
			Reported: reportedWeight(reported[name])})
	}
	weights := load.meter.Weigh(r.now(), targets)
	now := r.now()
	w.responsesRising = func(target string, pod types.UID) bool { return load.meter.Rising(target, string(pod), now) }
	w.responseRates = make(map[string]float64, len(weights.ByTarget))
	for name, wt := range weights.ByTarget {
		w.weights.Of[name] = wt.Value
		w.weights.Source[name] = string(wt.Source)
		if wt.Rate > 0 {
			w.responseRates[name] = wt.Rate
		}
	}
	var changed []string
	for _, c := range weights.Changed {
		changed = append(changed, fmt.Sprintf("%s %d→%d (%s/s, typical %s/s)", c.Target, c.From, c.To,
			formatRate(c.Rate), formatRate(weights.Typical)))
	}
	if len(changed) > 0 {
		more := ""
		if len(changed) > 10 {
			more, changed = fmt.Sprintf(" and %d more", len(changed)-10), changed[:10]
		}
		r.Recorder.Eventf(cluster, corev1.EventTypeNormal, operatorv1alpha1.EventWeightsChanged,
			"measured weights changed: %s%s", strings.Join(changed, ", "), more)
	}
}

// scrapeResponseCounters reads the counters of every ready collector not read within the poll interval.
// One GET /metrics per pod and poll interval: a collector of 1,000 targets with 2 subscriptions each answers
// some 340 KB, read and parsed in about 4 ms (docs/placement.md, "What the measurement costs").
func (r *Reconciler) scrapeResponseCounters(ctx context.Context, cluster *operatorv1alpha1.Cluster, w *world, load *measuredLoad) {
	logger := log.FromContext(ctx)
	seen := map[types.UID]bool{}
	ordinals := make([]int, 0, len(w.pods))
	for ordinal := range w.pods {
		ordinals = append(ordinals, ordinal)
	}
	sort.Ints(ordinals)
	for _, ordinal := range ordinals {
		pod := w.pods[ordinal]
		seen[pod.UID] = true
		if ready, _ := podReadiness(pod); !ready {
			continue
		}
		if at, ok := load.scrapedAt[pod.UID]; ok && r.now().Sub(at) < r.PollInterval*9/10 {
			continue
		}
		c, err := r.Dialer.Client(cluster, pod, w.clientTLS())
		if err != nil {
			logger.Error(err, "reach collector for its response counters", "pod", pod.Name)
			continue
		}
		counts, err := c.ResponseCounts(ctx)
		if err != nil {
			logger.Error(err, "read response counters", "pod", pod.Name)
			continue
		}
		at := r.now()
		load.meter.Observe(string(pod.UID), at, counts)
		load.scrapedAt[pod.UID] = at
	}
	for uid := range load.scrapedAt {
		if !seen[uid] {
			delete(load.scrapedAt, uid)
		}
	}
}

// reportedWeight is the weight a Target's status reports for the Cluster, as the Meter starts from it.
func reportedWeight(st operatorv1alpha1.TargetClusterState) loadweight.Weight {
	rate, _ := strconv.ParseFloat(st.ResponseRate, 64)
	return loadweight.Weight{Value: int(st.Weight), Source: loadweight.Source(st.WeightSource), Rate: rate}
}

// formatRate writes a rate with two decimals at most: "12.35", "0.05", "1500".
func formatRate(perSecond float64) string {
	return strconv.FormatFloat(math.Round(perSecond*100)/100, 'f', -1, 64)
}

// sameRate tells whether two reported rates are close enough that a status need not be written for the
// change alone: within a factor of √2, a quarter of a weight's band. Rates wander; statuses are written
// when they say something new.
func sameRate(a, b string) bool {
	if a == b {
		return true
	}
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	if errA != nil || errB != nil || x <= 0 || y <= 0 {
		return false
	}
	return math.Abs(math.Log2(x/y)) <= 0.5
}
