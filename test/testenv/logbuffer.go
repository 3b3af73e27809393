package testenv

import (
	"bytes"
	"strings"
	"sync"
)

// LogBuffer collects what loggers write from many goroutines, so that a suite can check what its operator
// logged (or never logged).
type LogBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	discard bool
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.discard {
		return len(p), nil
	}
	return b.buf.Write(p)
}

// Discard makes the buffer drop what is written (true) or keep it again (false): a run of hours would
// otherwise keep every line.
func (b *LogBuffer) Discard(discard bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.discard = discard
}

func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Tail is the last n lines written.
func (b *LogBuffer) Tail(n int) string {
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}
