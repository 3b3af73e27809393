package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// state is what <dir>/state.json records about a running demo.
type state struct {
	// ServePID is the background process that owns everything below.
	ServePID int `json:"servePID"`
	// PIDs are the control-plane processes and the operator's containers ("operator/<pod>"), by name, as
	// they were when the demo became ready.
	PIDs       map[string]int `json:"pids"`
	Kubeconfig string         `json:"kubeconfig"`
	BinDir     string         `json:"binDir"`
	Targets    int            `json:"targets"`
}

func statePath(dir string) string { return filepath.Join(dir, "state.json") }

func readState(dir string) (state, error) {
	var s state
	data, err := os.ReadFile(statePath(dir))
	if err != nil {
		return s, fmt.Errorf("read demo state (is the demo running? `make demo`): %w", err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("decode %s: %w", statePath(dir), err)
	}
	return s, nil
}

func writeState(dir string, s state) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode demo state: %w", err)
	}
	tmp := statePath(dir) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("write demo state: %w", err)
	}
	if err := os.Rename(tmp, statePath(dir)); err != nil {
		return fmt.Errorf("write demo state: %w", err)
	}
	return nil
}
