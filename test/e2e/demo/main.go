// Command demo runs the operator on a local control plane with fake collectors and shows the
// HorizontalPodAutoscaler sizing a collector fleet on the operator's own metrics (`make demo`).
//
//	demo up [--dir .e2e/demo] [--targets 300]   start everything in the background, watch until the fleet settles
//	demo watch [--dir …]                       watch again
//	demo targets N [--dir …]                   change the number of demo Targets, then watch
//	demo down [--dir …]                        stop everything (`make demo-down`)
//
// `up` starts `demo serve` as a background process (its own session): it owns the control plane, the
// operator and the fake collectors, and records every PID in <dir>/state.json so that `down` can stop them.
// The operator is installed from config/default and its two replicas run through the harness's pod
// emulator, as their pods would run (docs/development.md, "How e2e runs the operator").
package main

import (
	"flag"
	"fmt"
	"os"

	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	crlog.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	command, args := os.Args[1], os.Args[2:]
	fs := flag.NewFlagSet(command, flag.ExitOnError)
	dir := fs.String("dir", ".e2e/demo", "state directory: certificates, kubeconfig, logs, PIDs")
	targets := fs.Int("targets", 300, "number of Targets the demo creates")
	var err error
	switch command {
	case "up":
		_ = fs.Parse(args)
		err = up(*dir, *targets)
	case "serve":
		_ = fs.Parse(args)
		err = serve(*dir, *targets)
	case "watch":
		_ = fs.Parse(args)
		err = watchAndExplain(*dir)
	case "targets":
		if len(args) < 1 {
			usage()
		}
		var n int
		if _, err := fmt.Sscan(args[0], &n); err != nil || n < 0 {
			usage()
		}
		_ = fs.Parse(args[1:])
		err = setTargets(*dir, n)
	case "down":
		_ = fs.Parse(args)
		err = down(*dir)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "demo %s: %v\n", command, err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: demo up|watch|down [--dir DIR] [--targets N] | demo targets N [--dir DIR]")
	os.Exit(2)
}
