package gnmic

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// ErrStreamClosed is returned (wrapped) by WatchTargets when the collector
// ends the event stream; the caller reconnects and re-lists.
var ErrStreamClosed = errors.New("event stream closed by collector")

// Event types of TargetEvent.
const (
	EventCreate = "create"
	EventUpdate = "update"
	EventDelete = "delete"
)

// TargetEvent is one Server-Sent Event of the target state stream. A stream
// starts with one create event per existing target.
type TargetEvent struct {
	Timestamp time.Time    `json:"timestamp"`
	Store     string       `json:"store"`
	Kind      string       `json:"kind"`
	Name      string       `json:"name"`
	Type      string       `json:"event-type"`
	Object    TargetStatus `json:"object"`
}

// maxEventLine bounds one line of the event stream. Nothing bounds what a
// collector puts in an event, and a long line is no reason to drop a stream.
const maxEventLine = 4 << 20

// WatchTargets follows GET /api/v1/sse/targets?store=state and calls fn for
// every event, in order, on the calling goroutine. It returns ctx.Err() when
// ctx ends and an error wrapping ErrStreamClosed when the collector ends the
// stream. The collector may drop events under load: treat them as hints and
// poll Targets as a backstop.
func (c *Client) WatchTargets(ctx context.Context, fn func(TargetEvent), opts ...WatchOption) error {
	return c.follow(ctx, "targets", targetStatePath, decodeEach(fn), opts)
}

// WatchOption adds a hook to WatchTargets.
type WatchOption func(*watchOptions)

type watchOptions struct {
	connected, alive func()
}

// OnConnected calls fn once the collector accepted the stream, before its first event: from then on no change
// of the collector's targets goes unannounced, unless the collector drops the event.
func OnConnected(fn func()) WatchOption { return func(o *watchOptions) { o.connected = fn } }

// OnAlive calls fn for every event and every keepalive comment: the stream still carries what the collector
// sends. A collector sends a keepalive every 15 s, so a longer silence means a stream that no longer delivers
// (a lost node leaves the connection open without anything on it).
func OnAlive(fn func()) WatchOption { return func(o *watchOptions) { o.alive = fn } }

const targetStatePath = "/api/v1/sse/targets?store=state"

// WatchTargetChanges is WatchTargets for a caller that only needs to know that something changed: fn is called
// for every event, which is not decoded (in a bulk arrival a collector sends a few events per target, and
// decoding them was half of what following the streams cost).
func (c *Client) WatchTargetChanges(ctx context.Context, fn func(), opts ...WatchOption) error {
	return c.follow(ctx, "targets", targetStatePath, func([]byte) error { fn(); return nil }, opts)
}

// Kinds of components whose state WatchComponents follows.
const (
	KindOutputs = "outputs"
	KindInputs  = "inputs"
)

// ComponentState is the runtime state the collector keeps of an output or an input: running once it
// started, failed with the reason when it could not. The apply that carries it is answered 200 either way.
type ComponentState struct {
	IntendedState string    `json:"intended-state"`
	State         string    `json:"state"`
	FailedReason  string    `json:"failed-reason,omitempty"`
	LastUpdated   time.Time `json:"last-updated"`
}

// Failed tells whether the component could not start.
func (s ComponentState) Failed() bool { return s.State == StateFailed }

// ComponentEvent is one Server-Sent Event of an output or input state stream. A stream starts with one
// create event per existing component; a delete event means the component is gone.
type ComponentEvent struct {
	Timestamp time.Time      `json:"timestamp"`
	Store     string         `json:"store"`
	Kind      string         `json:"kind"`
	Name      string         `json:"name"`
	Type      string         `json:"event-type"`
	Object    ComponentState `json:"object"`
}

// WatchComponents follows GET /api/v1/sse/{kind}?store=state for kind KindOutputs or KindInputs (the only
// place the collector tells whether they started) and calls fn for every event, in order, on the calling
// goroutine, with the same returns and options as WatchTargets.
func (c *Client) WatchComponents(ctx context.Context, kind string, fn func(ComponentEvent), opts ...WatchOption) error {
	return c.follow(ctx, kind, "/api/v1/sse/"+kind+"?store=state", decodeEach(fn), opts)
}

// follow reads the event stream at path, giving each event's data to dispatch, until ctx ends (ctx.Err()) or
// the stream does (an error saying which kind of state it followed).
func (c *Client) follow(ctx context.Context, kind, path string, dispatch func(data []byte) error, opts []WatchOption) error {
	var w watchOptions
	for _, o := range opts {
		o(&w)
	}
	if err := watchStream(ctx, c, path, dispatch, w); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		return fmt.Errorf("watch %s of %s: %w", kind, c.base, err)
	}
	return nil
}

// decodeEach gives each event's data to fn decoded as an E.
func decodeEach[E any](fn func(E)) func(data []byte) error {
	return func(data []byte) error {
		var ev E
		if err := json.Unmarshal(data, &ev); err != nil {
			return fmt.Errorf("decode event: %w", err)
		}
		fn(ev)
		return nil
	}
}

func watchStream(ctx context.Context, c *Client, path string, dispatch func(data []byte) error, opts watchOptions) error {
	header := http.Header{"Accept": {"text/event-stream"}, "Cache-Control": {"no-cache"}}
	resp, err := c.do(ctx, http.MethodGet, path, header, nil)
	if err != nil {
		return err
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return readStatusError(resp.StatusCode, resp.Body)
	}
	if opts.connected != nil {
		opts.connected()
	}
	alive := opts.alive
	if alive == nil {
		alive = func() {}
	}
	return readEvents(resp.Body, dispatch, alive)
}

// readEvents parses a text/event-stream: "data:" lines accumulate until a
// blank line dispatches the event's data; comments (": keepalive") and other
// fields are ignored.
func readEvents(r io.Reader, dispatch func(data []byte) error, alive func()) error {
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	var data []byte
	for scanner.Scan() {
		line := scanner.Bytes()
		switch {
		case len(line) == 0:
			if len(data) == 0 {
				continue
			}
			alive()
			if err := dispatch(data); err != nil {
				return err
			}
			data = data[:0]
		case line[0] == ':':
			// A comment, such as the collector's ": keepalive".
			alive()
		default:
			value, ok := bytes.CutPrefix(line, []byte("data:"))
			if !ok {
				continue
			}
			value = bytes.TrimPrefix(value, []byte(" "))
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, value...)
		}
	}
	if err := scanner.Err(); err != nil {
		return fmt.Errorf("read event stream: %w", err)
	}
	return ErrStreamClosed
}
