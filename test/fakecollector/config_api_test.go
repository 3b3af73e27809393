package fakecollector

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestTheConfigEndpointsShowTheStoredConfiguration(t *testing.T) {
	c := StartForTest(t)
	mustApply(t, c, `{"subscriptions":{"sub1":{"name":"sub1","sample-interval":"10s"}},`+
		`"outputs":{"o1":{"type":"prometheus"}},`+
		`"targets":{"r1":{`+good("r1", "a:1")+`,"password":"s3cret","token":"t0ken"}}}`)

	one := call(t, http.MethodGet, c.URL()+"/api/v1/config/targets/r1", "")
	list := call(t, http.MethodGet, c.URL()+"/api/v1/config/targets", "")
	for _, a := range []answer{one, list} {
		if a.status != http.StatusOK || strings.Contains(a.body, "s3cret") || strings.Contains(a.body, "t0ken") ||
			!strings.Contains(a.body, `"password":"****"`) {
			t.Errorf("config targets: %d %s, want the password and token masked as ****", a.status, a.body)
		}
	}
	var all map[string]map[string]map[string]any
	if err := json.Unmarshal([]byte(call(t, http.MethodGet, c.URL()+"/api/v1/config", "").body), &all); err != nil {
		t.Fatal(err)
	}
	if all["targets"]["r1"]["password"] != "s3cret" {
		t.Errorf("GET /api/v1/config shows the password in clear like gNMIc, got %v", all["targets"]["r1"]["password"])
	}
	if all["subscriptions"]["sub1"]["sample-interval"] != float64(10e9) || all["outputs"]["o1"]["type"] != "prometheus" {
		t.Errorf("GET /api/v1/config = %v, want every kind as stored", all)
	}

	for path, want := range map[string]int{
		"/api/v1/config/targets/nope": http.StatusNotFound,
		"/api/v1/config/routers":      http.StatusNotFound,
		"/api/v1/config/inputs":       http.StatusOK,
	} {
		if a := call(t, http.MethodGet, c.URL()+path, ""); a.status != want {
			t.Errorf("GET %s = %d, want %d", path, a.status, want)
		}
	}
}
