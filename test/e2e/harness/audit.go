package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// auditPolicy records, at the Metadata level, every request of the operator's ServiceAccounts once it is
// complete, and nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
  userGroups: ["system:serviceaccounts:` + OperatorNamespace + `"]
- level: None
`

// auditFlags are kube-apiserver's audit flags when the operator is audited.
func (cp *ControlPlane) auditFlags() ([]string, error) {
	if cp.auditLog == "" {
		return nil, nil
	}
	policy := filepath.Join(cp.Dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, fmt.Errorf("write audit policy: %w", err)
	}
	return []string{"--audit-policy-file=" + policy, "--audit-log-path=" + cp.auditLog,
		"--audit-log-format=json", "--audit-log-mode=blocking", "--audit-log-maxsize=0"}, nil
}

// APIRequest is one kind of request: its verb, resource and subresource (e.g. "update leases",
// "patch clusters/status"), or its path when it names no resource.
type APIRequest string

// OperatorRequests counts the operator's requests to kube-apiserver that completed in [from, to), by kind;
// the control plane must have been started with AuditOperator.
func (cp *ControlPlane) OperatorRequests(from, to time.Time) (map[APIRequest]int, error) {
	if cp.auditLog == "" {
		return nil, fmt.Errorf("the control plane was started without AuditOperator")
	}
	f, err := os.Open(cp.auditLog)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	defer f.Close()
	out := map[APIRequest]int{}
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for scanner.Scan() {
		var e struct {
			Verb       string `json:"verb"`
			RequestURI string `json:"requestURI"`
			ObjectRef  *struct {
				Resource    string `json:"resource"`
				Subresource string `json:"subresource"`
			} `json:"objectRef"`
			StageTimestamp time.Time `json:"stageTimestamp"`
		}
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("parse audit event: %w", err)
		}
		if e.StageTimestamp.Before(from) || !e.StageTimestamp.Before(to) {
			continue
		}
		kind := e.Verb + " " + e.RequestURI
		if e.ObjectRef != nil && e.ObjectRef.Resource != "" {
			kind = e.Verb + " " + e.ObjectRef.Resource
			if e.ObjectRef.Subresource != "" {
				kind += "/" + e.ObjectRef.Subresource
			}
		}
		out[APIRequest(kind)]++
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	return out, nil
}
