package fakenetbox

import "time"

// FetchesSince are the fetches (first pages) the server answered at or after a time.
func (s *Server) FetchesSince(since time.Time) []Request {
	var out []Request
	for _, f := range s.Fetches() {
		if !f.At.Before(since) {
			out = append(out, f)
		}
	}
	return out
}

// ShortestFetchGap is the shortest time between the starts of two consecutive fetches (an hour when there are
// fewer than two). A fetch of killedClient that a fetch at or after killed follows is left out: the sync it
// started died with that process, unwritten, and its successor may sync at once. An empty killedClient leaves
// nothing out.
func ShortestFetchGap(fetches []Request, killedClient string, killed time.Time) time.Duration {
	least := time.Hour
	for i := 1; i < len(fetches); i++ {
		if killedClient != "" && fetches[i-1].Client == killedClient && !fetches[i].At.Before(killed) {
			continue
		}
		least = min(least, fetches[i].At.Sub(fetches[i-1].At))
	}
	return least
}

// FetchLog is the fetches' times and senders, for a failure's message.
func FetchLog(fetches []Request) []string {
	var out []string
	for _, f := range fetches {
		out = append(out, f.At.Format("15:04:05.000")+" "+f.Client)
	}
	return out
}
