package gnmic

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// ResponseCounterMetric is the collector's counter of the subscribe responses it received, per target and
// subscription (gNMIc's pkg/collector/managers/targets/metrics.go). The series of a removed target stays at
// its last value; the counter starts again from zero when the collector restarts.
const ResponseCounterMetric = "gnmic_targets_subscribe_response_received_count"

// ResponseCounts reads the collector's received-responses counters (GET /metrics) and sums them per target
// over its subscriptions. A target that never received a response has no series and is absent. Only the
// lines of ResponseCounterMetric are parsed: the rest of the exposition (Go runtime, process, outputs) is
// skipped, so a family the operator does not know cannot fail the read.
func (c *Client) ResponseCounts(ctx context.Context) (map[string]float64, error) {
	resp, err := c.do(ctx, http.MethodGet, "/metrics", nil, nil)
	if err != nil {
		return nil, fmt.Errorf("read response counters of %s: %w", c.base, err)
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read response counters of %s: %w", c.base, readStatusError(resp.StatusCode, resp.Body))
	}
	counts := map[string]float64{}
	scanner := bufio.NewScanner(resp.Body)
	scanner.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		if !strings.HasPrefix(line, ResponseCounterMetric+"{") {
			continue
		}
		target, value, err := parseCounterLine(line[len(ResponseCounterMetric):])
		if err != nil {
			return nil, fmt.Errorf("read response counters of %s: %q: %w", c.base, line, err)
		}
		counts[target] += value
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("read response counters of %s: %w", c.base, err)
	}
	return counts, nil
}

// parseCounterLine reads `{labels} value [timestamp]` of the text exposition format and returns the target
// label and the value.
func parseCounterLine(rest string) (target string, value float64, err error) {
	labels, rest, err := parseLabels(rest)
	if err != nil {
		return "", 0, err
	}
	target, ok := labels["target"]
	if !ok {
		return "", 0, fmt.Errorf("no target label")
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return "", 0, fmt.Errorf("no value")
	}
	value, err = strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return "", 0, fmt.Errorf("value: %w", err)
	}
	return target, value, nil
}

// parseLabels reads `{name="value",...}` with the format's escapes (\\, \", \n) and returns what follows.
func parseLabels(s string) (map[string]string, string, error) {
	if !strings.HasPrefix(s, "{") {
		return nil, "", fmt.Errorf("no labels")
	}
	labels := map[string]string{}
	i := 1
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == ',') {
			i++
		}
		if i < len(s) && s[i] == '}' {
			return labels, s[i+1:], nil
		}
		eq := strings.IndexByte(s[i:], '=')
		if eq < 0 || i+eq+1 >= len(s) || s[i+eq+1] != '"' {
			return nil, "", fmt.Errorf("malformed labels")
		}
		name := strings.TrimSpace(s[i : i+eq])
		i += eq + 2
		var value strings.Builder
		for {
			if i >= len(s) {
				return nil, "", fmt.Errorf("unterminated label value")
			}
			ch := s[i]
			i++
			if ch == '"' {
				break
			}
			if ch == '\\' && i < len(s) {
				switch s[i] {
				case 'n':
					value.WriteByte('\n')
				default:
					value.WriteByte(s[i])
				}
				i++
				continue
			}
			value.WriteByte(ch)
		}
		labels[name] = value.String()
	}
}
