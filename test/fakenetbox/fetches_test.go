package fakenetbox

import (
	"testing"
	"time"
)

func TestShortestFetchGap(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	steady := []Request{{At: at(0), Client: "a/1"}, {At: at(10), Client: "a/1"}, {At: at(19), Client: "a/1"}}
	// a/1 fetched at 20 and was killed at 21; its successor b/2 fetched at 21.5 and then every 10 s.
	handover := []Request{{At: at(10), Client: "a/1"}, {At: at(20), Client: "a/1"}, {At: at(21.5), Client: "b/2"},
		{At: at(31.5), Client: "b/2"}}
	for _, tc := range []struct {
		name    string
		fetches []Request
		killed  string
		at      time.Time
		want    time.Duration
	}{
		{"fewer than two fetches", steady[:1], "", time.Time{}, time.Hour},
		{"steady", steady, "", time.Time{}, 9 * time.Second},
		{"a handover counted whole", handover, "", time.Time{}, 1500 * time.Millisecond},
		{"the killed process's last fetch left out", handover, "a/1", at(21), 10 * time.Second},
		{"a fetch of the killed process before the kill's successor is kept", handover, "a/1", at(40), 1500 * time.Millisecond},
		{"another process named killed leaves nothing out", handover, "c/3", at(21), 1500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ShortestFetchGap(tc.fetches, tc.killed, tc.at); got != tc.want {
				t.Errorf("ShortestFetchGap = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFetchLogNamesTimeAndSender(t *testing.T) {
	at := time.Date(2026, 11, 27, 12, 3, 4, 567e6, time.UTC)
	got := FetchLog([]Request{{At: at, Client: "op-0/42"}})
	if len(got) != 1 || got[0] != "12:03:04.567 op-0/42" {
		t.Errorf("FetchLog = %q", got)
	}
}
