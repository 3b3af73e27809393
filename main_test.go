package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// runMainEnv makes the test binary run main() itself, so that the tests below drive the real command line.
const runMainEnv = "GNMIC_OPERATOR_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		os.Args = append([]string{"gnmic-operator"}, strings.Fields(os.Getenv(runMainEnv+"_ARGS"))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runOperator(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), runMainEnv+"=1", runMainEnv+"_ARGS="+strings.Join(args, " "))
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), errOut.String(), exit.ExitCode()
	}
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return out.String(), errOut.String(), 0
}

func TestPlanSubcommandPlacesFromStdin(t *testing.T) {
	stdout, stderr, code := runOperator(t, `{"pods": 2, "targets": ["ns/a", "ns/b", "ns/c"], "current": {"ns/a": 5}}`, "plan")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var out struct {
		Capacity        int            `json:"capacity"`
		Assignments     map[string]int `json:"assignments"`
		Unassigned      []string       `json:"unassigned"`
		LowerBoundMoves int            `json:"lowerBoundMoves"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("stdout is not the JSON answer: %v\n%s", err, stdout)
	}
	if out.Capacity != 2 || len(out.Assignments) != 3 || len(out.Unassigned) != 0 || out.LowerBoundMoves != 1 {
		t.Fatalf("unexpected answer %+v", out)
	}
}

func TestPlanSubcommandRejectsBadInputWithStatus2AndOneLine(t *testing.T) {
	_, stderr, code := runOperator(t, `{"pods": -1, "targets": []}`, "plan")
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if lines := strings.Count(strings.TrimRight(stderr, "\n"), "\n"); lines != 0 || stderr == "" {
		t.Fatalf("want one line on stderr, got %q", stderr)
	}
}

func TestPlanClusterSubcommandWithoutKubeconfigSaysSoWithStatus1(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	stdout, stderr, code := runOperator(t, "", "plan", "--cluster", "telemetry/telemetry", "--replicas", "4")
	if code != 1 || stdout != "" {
		t.Fatalf("exit %d, stdout %q; want 1 and nothing", code, stdout)
	}
	if want := "plan: no kubeconfig: give --kubeconfig, set KUBECONFIG, or write ~/.kube/config\n"; stderr != want {
		t.Fatalf("stderr %q, want %q", stderr, want)
	}
}

func TestTheOperatorRefusesABatchSizeTheCollectorWouldOverflow(t *testing.T) {
	for _, batch := range []string{"0", "129", "1000"} {
		_, stderr, code := runOperator(t, "", "--collector-batch-size="+batch)
		if code != 1 || !strings.Contains(stderr, "--collector-batch-size="+batch+": must be between 1 and 128") {
			t.Errorf("batch %s: exit %d, stderr %q", batch, code, stderr)
		}
	}
}

func TestTheOperatorRefusesAMetricsAPIDrainItWouldNotWaitFor(t *testing.T) {
	for _, args := range [][]string{
		{"--metrics-api-drain-period=-1s"},
		{"--metrics-api-drain-period=31s"},
		{"--metrics-api-drain-period=10s", "--graceful-shutdown-timeout=5s"},
	} {
		_, stderr, code := runOperator(t, "", args...)
		if code != 1 || !strings.Contains(stderr, "--metrics-api-drain-period=") || !strings.Contains(stderr, "must be between 0 and --graceful-shutdown-timeout") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}
