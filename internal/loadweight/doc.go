// Package loadweight turns the collectors' per-target response counters into placement weights.
//
// A collector counts, per target and subscription, the subscribe responses it received
// (gnmic_targets_subscribe_response_received_count). A Meter is fed every scrape of every collector
// (Observe: per target, the sum over its subscriptions) and keeps each target's samples of the last Window,
// one series per collector pod. A target's rate is the increase of all its series over the time they span:
// a counter that went down was reset (the collector restarted) and counts from zero, as Prometheus counts
// it; a target that moved keeps its old pod's series, frozen, beside the new one, so a move neither adds
// nor loses more than the responses between the move and the new pod's first scrape. A target is measured
// once its samples span half the Window and its rate is above zero: a silent target (its device down, or a
// subscription that sends only on change) keeps the weight it has.
//
// Weigh makes weights of rates. The typical rate is the median of the measured targets' rates; a target's
// ratio is its rate over the typical rate, and the weight it would get is that ratio rounded to the nearest
// power of two, at least 1 and at most MaxWeight. Weights change only with hysteresis: a weight holds while
// the ratio stays within 1.5 powers of two of it (from w/2.83 to 2.83w, its band), and follows the ratio
// only once the ratio has stayed outside the band for Hysteresis. Rates that wander by ±30 % around their
// means thus change no weight, the rounding's own error (up to a factor 1.41) included, and a target
// whose rate rises tenfold gets its new weight Hysteresis after its averaged rate left the band. Every
// weight starts as the target's declared weight (or the weight last reported for it, after a restart of
// the operator) and is subject to the same rule, with a narrower band: a declared weight holds only while
// the ratio rounds to it. A target not yet measured weighs its declared weight.
//
// Rising tells whether a target's counter on a pod rose between its last two scrapes: the ground truth of
// whether that collector receives its data.
//
// The package knows nothing of Kubernetes or of HTTP: a reconciler reads the counters, feeds the Meter,
// and passes the weights to the placement core.
package loadweight
