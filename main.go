// Command gnmic-operator runs fleets of gNMIc telemetry collectors on Kubernetes.
//
//	gnmic-operator [flags]         run the operator (see --help for the flags)
//	gnmic-operator plan [flags]    compute a placement from JSON on stdin, or with --cluster NS/NAME for a
//	                               live Cluster read with your kubeconfig (see docs/planning.md)
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/gnmic-operator/gnmic-operator/internal/plan"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "plan" {
		os.Exit(plan.Main(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}

	opts := defaultOptions()
	zapOpts := zap.Options{Development: false}
	opts.bindFlags(flag.CommandLine)
	zapOpts.BindFlags(flag.CommandLine)
	flag.Usage = usage
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	if err := run(ctrl.SetupSignalHandler(), opts); err != nil {
		ctrl.Log.WithName("setup").Error(err, "operator stopped")
		os.Exit(1)
	}
}

func usage() {
	out := flag.CommandLine.Output()
	fmt.Fprintf(out, "Usage:\n  %s [flags]        run the operator\n  %s plan [flags]   compute a placement from JSON on stdin, or for a live Cluster with --cluster NS/NAME (docs/planning.md)\n\nFlags:\n", os.Args[0], os.Args[0])
	flag.PrintDefaults()
}
