package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gnmic-operator/gnmic-operator/test/e2e/harness"
)

const (
	demoNamespace = "demo"
	demoCluster   = "telemetry"
	demoHPA       = "telemetry"
)

var demoFleet = harness.Fleet{Namespace: demoNamespace, Cluster: demoCluster}

// up starts `demo serve` in the background unless a demo already runs, waits until it is ready, then watches.
func up(dir string, targets int) error {
	if s, err := readState(dir); err == nil {
		if syscall.Kill(s.ServePID, 0) == nil {
			fmt.Printf("demo already running (pid %d)\n", s.ServePID)
			return watchAndExplain(dir)
		}
		// The last demo's background process is gone: stop whatever it left running before starting anew.
		if err := down(dir); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("clear %s: %w", dir, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable: %w", err)
	}
	logPath := filepath.Join(dir, "logs", "demo.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("demo log: %w", err)
	}
	defer logFile.Close()
	cmd := exec.Command(self, "serve", "--dir", dir, "--targets", fmt.Sprint(targets))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start demo serve: %w", err)
	}
	fmt.Printf("starting the local control plane, the operator and fake collectors (log: %s)\n", logPath)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	started := time.Now()
	for {
		if _, err := readState(dir); err == nil {
			break
		}
		select {
		case err := <-exited:
			return fmt.Errorf("demo serve stopped (%v); see %s", err, logPath)
		case <-time.After(250 * time.Millisecond):
		}
		if time.Since(started) > 3*time.Minute {
			return fmt.Errorf("demo not ready after 3 minutes; see %s", logPath)
		}
	}
	fmt.Printf("ready after %s\n", time.Since(started).Round(100*time.Millisecond))
	return watchAndExplain(dir)
}

// serve runs everything in the foreground until SIGTERM or SIGINT, then stops it.
func serve(dir string, targets int) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	logf := func(format string, args ...any) {
		fmt.Printf("%s "+format+"\n", append([]any{time.Now().Format(time.TimeOnly)}, args...)...)
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	cp, err := harness.Start(ctx, harness.Options{Dir: absDir, PodCIDR: harness.DemoPodCIDR, Log: logf})
	if err != nil {
		return err
	}
	defer cp.Stop()
	collectors, err := cp.StartCollectors(ctx)
	if err != nil {
		return err
	}
	defer collectors.Stop()
	if err := cp.StartOperator(ctx, harness.OperatorOptions{}); err != nil {
		return err
	}
	if err := applySample(ctx, cp, targets); err != nil {
		return err
	}
	if err := writeState(dir, state{
		ServePID: os.Getpid(), PIDs: cp.PIDs(), Kubeconfig: cp.Kubeconfig, BinDir: cp.BinDir, Targets: targets,
	}); err != nil {
		return err
	}
	logf("demo ready; stop it with `make demo-down`")
	<-ctx.Done()
	logf("stopping")
	return nil
}

// applySample applies config/samples/demo and creates the Targets.
func applySample(ctx context.Context, cp *harness.ControlPlane, targets int) error {
	samples := filepath.Join(harness.RepoRoot(), "config", "samples", "demo")
	if out, err := cp.Kubectl(ctx, "apply", "-f", filepath.Join(samples, "1-namespace.yaml")); err != nil {
		return fmt.Errorf("apply demo namespace: %w: %s", err, out)
	}
	if err := cp.WaitForServiceAccount(ctx, demoNamespace); err != nil {
		return err
	}
	if out, err := cp.Kubectl(ctx, "apply", "-f", samples); err != nil {
		return fmt.Errorf("apply %s: %w: %s", samples, err, out)
	}
	return demoFleet.CreateTargets(ctx, cp, 0, targets)
}

// down stops the background demo and, should it be gone already, every process it recorded.
func down(dir string) error {
	s, err := readState(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			fmt.Println("no demo running")
			return nil
		}
		return err
	}
	var errs []error
	if err := harness.StopPID(s.ServePID, 30*time.Second); err != nil {
		errs = append(errs, err)
	}
	for name, pid := range s.PIDs {
		if err := harness.StopPID(pid, 10*time.Second); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	if err := os.Remove(statePath(dir)); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, fmt.Errorf("remove demo state: %w", err))
	}
	if len(errs) == 0 {
		fmt.Printf("demo stopped (logs kept in %s)\n", filepath.Join(dir, "logs"))
	}
	return errors.Join(errs...)
}
