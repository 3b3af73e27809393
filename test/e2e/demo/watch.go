package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

// settledFor is how long the fleet must stay unchanged and fully placed to count as settled.
const settledFor = 15 * time.Second

// watchAndExplain shows the fleet until it settles, then how to explore it.
func watchAndExplain(dir string) error {
	s, err := readState(dir)
	if err != nil {
		return err
	}
	if err := watch(s); err != nil {
		return err
	}
	explain(dir, s)
	return nil
}

// watch prints a table row per change (redrawn in place on a terminal) until the fleet has placed every
// target on ready pods the autoscaler agrees with (and is not holding a higher recommendation during its
// scale-down stabilization window), unchanged for settledFor, or 5 minutes passed.
func watch(s state) error {
	cp, err := harness.Connect(s.Kubeconfig, s.BinDir)
	if err != nil {
		return err
	}
	c, err := cp.Client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	info, statErr := os.Stdout.Stat()
	tty := statErr == nil && info.Mode()&os.ModeCharDevice != 0
	header := fmt.Sprintf("%-8s %-8s %-5s %-7s %-10s %-11s %s", "TIME", "REPLICAS", "READY", "TARGETS", "UNASSIGNED", "HPA CUR/DES", "PER-POD LOAD / HPA LAST DECISION")
	var rows []string
	var last string
	var stableSince time.Time
	start := time.Now()
	for {
		snap, err := demoFleet.Observe(ctx, cp, c, demoHPA)
		if err != nil {
			return err
		}
		key := fmt.Sprintf("%d %d %d %d %d %d %s %s", snap.Replicas, snap.ReadyReplicas, snap.Targets, snap.Unassigned,
			snap.HPACurrent, snap.HPADesired, snap.PodLoad(), snap.HPAMessage)
		if key != last {
			last, stableSince = key, time.Now()
			row := fmt.Sprintf("%-8s %-8d %-5d %-7d %-10d %-11s %s\n%57s %s", fmt.Sprintf("+%ds", int(time.Since(start).Seconds())),
				snap.Replicas, snap.ReadyReplicas, snap.Targets, snap.Unassigned,
				fmt.Sprintf("%d/%d", snap.HPACurrent, snap.HPADesired), snap.PodLoad(), "", snap.HPAMessage)
			rows = append(rows, row)
			if tty {
				fmt.Print("\033[H\033[2J")
				fmt.Println(header)
				fmt.Println(strings.Join(rows[max(0, len(rows)-12):], "\n"))
			} else {
				if len(rows) == 1 {
					fmt.Println(header)
				}
				fmt.Println(row)
			}
		}
		settled := snap.Unassigned == 0 && int(snap.Targets) == s.Targets && snap.Replicas == snap.ReadyReplicas &&
			snap.HPADesired == snap.Replicas && snap.HPACurrent == snap.Replicas && int(sum(snap.PodTargets)) == s.Targets &&
			!strings.Contains(snap.HPAReason, "ScaleDownStabilized")
		if settled && time.Since(stableSince) >= settledFor {
			fmt.Printf("\nsettled after %s: %d targets on %d pods, none unassigned\n", time.Since(start).Round(time.Second)-settledFor, s.Targets, snap.Replicas)
			return nil
		}
		select {
		case <-ctx.Done():
			fmt.Println("\nthe fleet did not settle within 5 minutes; the demo keeps running")
			return nil
		case <-time.After(time.Second):
		}
	}
}

func sum(m map[string]int32) int32 {
	var total int32
	for _, v := range m {
		total += v
	}
	return total
}

// setTargets creates or deletes demo Targets so that exactly n exist, then watches.
func setTargets(dir string, n int) error {
	s, err := readState(dir)
	if err != nil {
		return err
	}
	cp, err := harness.Connect(s.Kubeconfig, s.BinDir)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if n > s.Targets {
		err = demoFleet.CreateTargets(ctx, cp, s.Targets, n)
	} else {
		err = demoFleet.RemoveTargets(ctx, cp, n, s.Targets)
	}
	if err != nil {
		return err
	}
	s.Targets = n
	if err := writeState(dir, s); err != nil {
		return err
	}
	return watchAndExplain(dir)
}

func explain(dir string, s state) {
	self := "bin/e2e-demo"
	kubeconfig, _ := filepath.Abs(s.Kubeconfig)
	fmt.Printf(`
The demo keeps running. Explore it with the control plane's kubectl:

  export KUBECONFIG=%s
  export PATH=%s:$PATH
  kubectl -n demo get clusters,pipelines,hpa
  kubectl -n demo get targets | head
  kubectl -n demo get cluster telemetry -o jsonpath='{range .status.collectors[*]}{.pod}{"\t"}{.targets}{"\n"}{end}'
  kubectl -n demo describe hpa telemetry
  kubectl -n gnmic-operator-system get deploy,pods,lease,endpointslices   # the operator, as config/default deploys it
  kubectl get --raw '/apis/external.metrics.k8s.io/v1beta1/namespaces/demo/targets_demand?labelSelector=cluster%%3Dtelemetry'
  kubectl get --raw '/apis/external.metrics.k8s.io/v1beta1/namespaces/demo/unassigned_targets?labelSelector=cluster%%3Dtelemetry'

Change the demand and watch the autoscaler follow:  %s targets 500 --dir %s   (or 120 to scale down)
Logs of every process (one per operator pod): %s
Stop everything: make demo-down
`, kubeconfig, s.BinDir, self, dir, filepath.Join(dir, "logs"))
}
