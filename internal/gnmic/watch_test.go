package gnmic

import (
	"errors"
	"strings"
	"testing"
)

func TestReadEventsParsesTheEventStreamFormat(t *testing.T) {
	stream := strings.Join([]string{
		": keepalive",
		"",
		"event: create",
		`data: {"name":"ns/r1","event-type":"create","store":"state","kind":"targets",`,
		`data: "object":{"state":"running","connection-state":"READY","subscriptions":{"s":"running"}}}`,
		"",
		"",
		"event: delete\r",
		`data:{"name":"ns/r2","event-type":"delete","object":{"state":"stopped"}}` + "\r",
		"\r",
		"retry: 1000",
		"",
	}, "\n")
	var events []TargetEvent
	alive := 0
	err := readEvents(strings.NewReader(stream), decodeEach(func(ev TargetEvent) { events = append(events, ev) }), func() { alive++ })
	if !errors.Is(err, ErrStreamClosed) {
		t.Fatalf("err = %v, want ErrStreamClosed at the end of the stream", err)
	}
	if len(events) != 2 {
		t.Fatalf("events = %+v, want 2", events)
	}
	if events[0].Name != "ns/r1" || events[0].Type != EventCreate || !events[0].Object.Collecting() {
		t.Errorf("first event = %+v", events[0])
	}
	if events[1].Name != "ns/r2" || events[1].Type != EventDelete || events[1].Object.State != StateStopped {
		t.Errorf("second event = %+v", events[1])
	}
	if alive != 3 {
		t.Errorf("stream seen alive %d times, want 3 (one keepalive, two events)", alive)
	}
}

func TestReadEventsFailsOnAMalformedEvent(t *testing.T) {
	err := readEvents(strings.NewReader("data: {nope\n\n"), decodeEach(func(TargetEvent) { t.Error("called") }), func() {})
	if err == nil || errors.Is(err, ErrStreamClosed) {
		t.Fatalf("err = %v, want a decode error", err)
	}
}

func TestReadEventsAcceptsLongLines(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	stream := `data: {"name":"` + long + `"}` + "\n\n"
	var got string
	_ = readEvents(strings.NewReader(stream), decodeEach(func(ev TargetEvent) { got = ev.Name }), func() {})
	if got != long {
		t.Fatalf("long event lost (%d bytes)", len(got))
	}
}
