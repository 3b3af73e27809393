package harness

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
)

// SaveCPUProfile saves to path the CPU profile of an operator replica that serves Go's profiling endpoints on
// port (--pprof-bind-address) over the next seconds: it returns once they have passed.
func SaveCPUProfile(r Replica, port string, seconds int, path string) error {
	url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", net.JoinHostPort(r.IP, port), seconds)
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
