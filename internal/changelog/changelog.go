// Package changelog counts changes and names the latest ones, so that whoever read the state at some count can
// tell what changed since without reading everything again.
package changelog

import "slices"

// Log counts changes and keeps the names of at least the latest Window of them (at most twice as many). The
// zero Log with a Window set is empty and ready. A Log is not safe for concurrent use.
type Log struct {
	// Window is how many of the latest changes Since can always name.
	Window int
	count  uint64
	names  []string
	// from is the number of the change before names[0].
	from uint64
}

// Note counts one change, of the named thing.
func (l *Log) Note(name string) {
	l.count++
	l.names = append(l.names, name)
	if len(l.names) > 2*l.Window {
		l.names = slices.Clone(l.names[len(l.names)-l.Window:])
		l.from = l.count - uint64(l.Window)
	}
}

// Count is how many changes were noted.
func (l *Log) Count() uint64 { return l.count }

// Since gives the names of the changes after the one numbered from, when the log still has them all. The slice
// is the Log's: read it before the next Note.
func (l *Log) Since(from uint64) ([]string, bool) {
	if from < l.from || from > l.count {
		return nil, false
	}
	return l.names[from-l.from:], true
}
