// Package fakenetbox is a test inventory: NetBox's device list (/api/dcim/devices/) as NetBox 4 serves it
// (count, next, previous, results; limit and offset; at most 1000 per page; Token or Bearer authentication),
// and knobs to change, remove and add devices, fail answers and truncate them. The TargetSource
// suites and the bench-targetsource acceptance run against it.
package fakenetbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DevicesPath is the path of NetBox's device list.
const DevicesPath = "/api/dcim/devices/"

// maxPageSize is NetBox's MAX_PAGE_SIZE default: a larger limit is served as this.
const maxPageSize = 1000

// Server serves the devices. Its zero value is not usable: use Start.
type Server struct {
	*httptest.Server

	mu      sync.Mutex
	devices map[int]*Device
	token   string
	// failStatus, when not 0, is the status of every answer.
	failStatus int
	// truncateTo, when >= 0, is how many devices the pages hold before the last page ends (count still
	// announces them all).
	truncateTo int
	// etags: answer with an ETag and honour If-None-Match. NetBox does not (its API answers every GET in full);
	// a static http_sd file behind a web server does.
	etags bool
	// requests counts the answers by status code.
	requests map[int]int
	// log is every request answered, in order; identify names each one's sender (nil: unnamed).
	log      []Request
	identify func(*http.Request) string
}

// Request is one request the server answered.
type Request struct {
	At time.Time
	// Client is who sent it, as the function given to IdentifyClients named it ("" without one).
	Client string
	// Offset is the page's offset: 0 is the first page, where every fetch of the list starts.
	Offset int
	Status int
}

// Device is a NetBox device, as much of it as a mapping reads.
type Device struct {
	ID           int            `json:"id"`
	URL          string         `json:"url"`
	Display      string         `json:"display"`
	Name         *string        `json:"name"`
	DeviceType   Ref            `json:"device_type"`
	Role         *Ref           `json:"role"`
	Platform     *Ref           `json:"platform"`
	Site         *Ref           `json:"site"`
	Status       Choice         `json:"status"`
	PrimaryIP    *IP            `json:"primary_ip"`
	PrimaryIP4   *IP            `json:"primary_ip4"`
	PrimaryIP6   *IP            `json:"primary_ip6"`
	Tags         []Ref          `json:"tags"`
	CustomFields map[string]any `json:"custom_fields"`
}

// Ref is a nested object: a site, role, platform, device type or tag.
type Ref struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
	Slug string `json:"slug"`
}

// Choice is a choice field such as status.
type Choice struct {
	Value string `json:"value"`
	Label string `json:"label"`
}

// IP is a nested IP address, with its prefix length as NetBox writes it.
type IP struct {
	ID      int    `json:"id"`
	Family  int    `json:"family"`
	Address string `json:"address"`
}

// NewDevice is the device with this id as Start makes them: dev-<id> at 10.<id/65536>.<id/256%256>.<id%256>/32,
// in site dc<id%4>, a leaf (a spine every tenth), platform srlinux, tag lab.
func NewDevice(id int) *Device {
	name := fmt.Sprintf("dev-%05d", id)
	ip := fmt.Sprintf("10.%d.%d.%d/32", (id>>16)&255, (id>>8)&255, id&255)
	role := Ref{ID: 1, Name: "Leaf", Slug: "leaf"}
	if id%10 == 0 {
		role = Ref{ID: 2, Name: "Spine", Slug: "spine"}
	}
	return &Device{
		ID: id, Display: name, Name: &name,
		DeviceType:   Ref{ID: 1, Name: "7220 IXR-D2", Slug: "7220-ixr-d2"},
		Role:         &role,
		Platform:     &Ref{ID: 1, Name: "SR Linux", Slug: "srlinux"},
		Site:         &Ref{ID: id%4 + 1, Name: fmt.Sprintf("DC%d", id%4), Slug: fmt.Sprintf("dc%d", id%4)},
		Status:       Choice{Value: "active", Label: "Active"},
		PrimaryIP:    &IP{ID: id, Family: 4, Address: ip},
		PrimaryIP4:   &IP{ID: id, Family: 4, Address: ip},
		Tags:         []Ref{{ID: 1, Name: "Lab", Slug: "lab"}},
		CustomFields: map[string]any{},
	}
}

// Start serves n devices, ids 1 to n, over plain HTTP. A token, when not empty, is required (Token <token> or
// Bearer <token>).
func Start(n int, token string) *Server {
	s := newServer(n, token)
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// StartTLS is Start over HTTPS, with a certificate of its own: CAPEM verifies it.
func StartTLS(n int, token string) *Server {
	s := newServer(n, token)
	s.Server = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	return s
}

func newServer(n int, token string) *Server {
	s := &Server{devices: map[int]*Device{}, token: token, truncateTo: -1, requests: map[int]int{}}
	for id := 1; id <= n; id++ {
		s.devices[id] = NewDevice(id)
	}
	return s
}

// CAPEM is the PEM certificate that verifies a StartTLS server.
func (s *Server) CAPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
}

// DevicesURL is the URL of the device list with this page size.
func (s *Server) DevicesURL(limit int) string {
	return fmt.Sprintf("%s%s?limit=%d", s.URL, DevicesPath, limit)
}

// Change changes the devices with these ids.
func (s *Server) Change(change func(*Device), ids ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if d, ok := s.devices[id]; ok {
			change(d)
		}
	}
}

// Put adds (or replaces) devices.
func (s *Server) Put(devices ...*Device) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range devices {
		s.devices[d.ID] = d
	}
}

// Remove removes the devices with these ids.
func (s *Server) Remove(ids ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.devices, id)
	}
}

// Fail answers every request with this status (500, 503...); 0 serves again.
func (s *Server) Fail(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failStatus = status
}

// Truncate makes the pages end after n devices while count still announces them all, as a proxy that cuts
// an answer short does; -1 serves them all again.
func (s *Server) Truncate(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.truncateTo = n
}

// SendETags makes the pages carry an ETag and honour If-None-Match (true), or not, as NetBox (false, the
// default).
func (s *Server) SendETags(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.etags = on
}

// Requests is how many answers had this status code.
func (s *Server) Requests(status int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[status]
}

// IdentifyClients names the sender of every later request with identify, called as the request arrives
// (its connection still open), for example to tell which process fetched.
func (s *Server) IdentifyClients(identify func(*http.Request) string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.identify = identify
}

// Log is every request answered so far, in the order they were answered.
func (s *Server) Log() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// Fetches are the requests for the first page (offset 0), whatever their answer: one per fetch of the list.
func (s *Server) Fetches() []Request {
	var fetches []Request
	for _, r := range s.Log() {
		if r.Offset == 0 {
			fetches = append(fetches, r)
		}
	}
	return fetches
}

// page is NetBox's paginated list.
type page struct {
	Count    int       `json:"count"`
	Next     *string   `json:"next"`
	Previous *string   `json:"previous"`
	Results  []*Device `json:"results"`
}

func (s *Server) serve(w http.ResponseWriter, req *http.Request) {
	s.mu.Lock()
	identify := s.identify
	s.mu.Unlock()
	var client string
	if identify != nil {
		client = identify(req)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	status, body, etag := s.answer(req)
	s.requests[status]++
	_, offset := pageOf(req)
	s.log = append(s.log, Request{At: time.Now(), Client: client, Offset: offset, Status: status})
	w.Header().Set("Content-Type", "application/json")
	if etag != "" {
		w.Header().Set("ETag", etag)
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// answer is the status, body and ETag of a request. s.mu is held.
func (s *Server) answer(req *http.Request) (int, []byte, string) {
	if req.URL.Path != DevicesPath {
		return http.StatusNotFound, []byte(`{"detail":"Not found."}`), ""
	}
	if s.token != "" {
		auth := req.Header.Get("Authorization")
		if auth != "Token "+s.token && auth != "Bearer "+s.token {
			return http.StatusForbidden, []byte(`{"detail":"Authentication credentials were not provided."}`), ""
		}
	}
	if s.failStatus != 0 {
		return s.failStatus, []byte(`<html><body><h1>Server Error</h1></body></html>`), ""
	}
	limit, offset := pageOf(req)
	ids := make([]int, 0, len(s.devices))
	for id := range s.devices {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	served := len(ids)
	if s.truncateTo >= 0 {
		served = min(served, s.truncateTo)
	}
	p := page{Count: len(ids), Results: []*Device{}}
	for _, id := range ids[min(offset, served):min(offset+limit, served)] {
		d := *s.devices[id]
		d.URL = fmt.Sprintf("%s://%s%s%d/", scheme(req), req.Host, DevicesPath, id)
		p.Results = append(p.Results, &d)
	}
	if offset+limit < served {
		next := pageURL(req, limit, offset+limit)
		p.Next = &next
	}
	if offset > 0 {
		prev := pageURL(req, limit, max(offset-limit, 0))
		p.Previous = &prev
	}
	body, err := json.Marshal(p)
	if err != nil {
		return http.StatusInternalServerError, []byte(err.Error()), ""
	}
	if !s.etags {
		return http.StatusOK, body, ""
	}
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	if matches(req.Header.Get("If-None-Match"), etag) {
		return http.StatusNotModified, nil, etag
	}
	return http.StatusOK, body, etag
}

// pageOf is the limit and offset a request asks for, as NetBox reads them: 50 and 0 unless given, the
// limit at most maxPageSize.
func pageOf(req *http.Request) (limit, offset int) {
	q := req.URL.Query()
	limit = 50
	if v, err := strconv.Atoi(q.Get("limit")); err == nil && v > 0 {
		limit = min(v, maxPageSize)
	}
	if v, err := strconv.Atoi(q.Get("offset")); err == nil && v >= 0 {
		offset = v
	}
	return limit, offset
}

// pageURL is the absolute URL of another page of the same list, as NetBox writes next and previous.
func pageURL(req *http.Request, limit, offset int) string {
	q := req.URL.Query()
	q.Set("limit", strconv.Itoa(limit))
	q.Set("offset", strconv.Itoa(offset))
	return fmt.Sprintf("%s://%s%s?%s", scheme(req), req.Host, req.URL.Path, q.Encode())
}

func scheme(req *http.Request) string {
	if req.TLS != nil {
		return "https"
	}
	return "http"
}

func matches(ifNoneMatch, etag string) bool {
	for _, t := range strings.Split(ifNoneMatch, ",") {
		if strings.TrimSpace(t) == etag {
			return true
		}
	}
	return false
}
