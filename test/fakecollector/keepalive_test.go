package fakecollector

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
	"time"
)

func TestGRPCKeepaliveIsStoredAndReturnedInGNMIcsForm(t *testing.T) {
	tests := []struct {
		name string
		sent string
		want map[string]any
	}{
		{"durations as strings", `{"time":"10s","timeout":"2s","permit-without-stream":true}`,
			map[string]any{"Time": float64(10 * time.Second), "Timeout": float64(2 * time.Second), "PermitWithoutStream": true}},
		{"durations in nanoseconds", `{"time":30000000000,"timeout":5000000000}`,
			map[string]any{"Time": float64(30 * time.Second), "Timeout": float64(5 * time.Second), "PermitWithoutStream": false}},
		{"unknown keys ignored, missing fields zero", `{"Interval":"1s"}`,
			map[string]any{"Time": float64(0), "Timeout": float64(0), "PermitWithoutStream": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := StartForTest(t, Realistic())
			mustApply(t, c, config(map[string]string{"r1": good("r1", "a:1") + `,"grpc-keepalive":` + tt.sent}))
			waitIdle(t, c)

			if got := running(t, c)["r1"].Config["grpc-keepalive"]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("GET /api/v1/targets config = %v, want %v", got, tt.want)
			}
			if got := configured(t, c)["r1"]["grpc-keepalive"]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("GET /api/v1/config/targets = %v, want %v", got, tt.want)
			}
			var one map[string]any
			_ = json.Unmarshal([]byte(call(t, http.MethodGet, c.URL()+"/api/v1/config/targets/r1", "").body), &one)
			if got := one["grpc-keepalive"]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("GET /api/v1/config/targets/r1 = %v, want %v", got, tt.want)
			}
		})
	}
}
