// Package hostile makes the answers an inventory or a pusher may send to take an operator down: a gzip body that
// inflates a thousandfold, millions of records, a body that trickles. Each is made on the fly as it is read, so
// that a test or a benchmark of a gigabyte costs no disk and no memory of its own.
package hostile

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Record is the record the generators repeat: the smallest object, 7 bytes, as in the report of issue 46.
const Record = `{"a":0}`

// repeat reads head, then body n times, then tail.
type repeat struct {
	head, body, tail []byte
	n                int64
	// at is the position in the current part; part: 0 head, 1 body, 2 tail, 3 done.
	at, part int
}

func (r *repeat) Read(p []byte) (int, error) {
	written := 0
	for written < len(p) {
		var cur []byte
		switch {
		case r.part == 0:
			cur = r.head
		case r.part == 1 && r.n > 0:
			cur = r.body
		case r.part == 1:
			r.part, r.at = 2, 0
			continue
		case r.part == 2:
			cur = r.tail
		default:
			if written == 0 {
				return 0, io.EOF
			}
			return written, nil
		}
		c := copy(p[written:], cur[r.at:])
		written += c
		r.at += c
		if r.at == len(cur) {
			r.at = 0
			if r.part == 1 {
				r.n--
			} else {
				r.part++
			}
		}
	}
	return written, nil
}

// Repeat reads head, then body n times, then tail.
func Repeat(head, body, tail string, n int64) io.Reader {
	return &repeat{head: []byte(head), body: []byte(body), tail: []byte(tail), n: n}
}

// Records is a page of n records under "results", as NetBox names them: {"results":[{"a":0},…]}.
func Records(n int64) io.Reader {
	if n == 0 {
		return strings.NewReader(`{"results":[]}`)
	}
	return Repeat(`{"results":[`, Record+",", Record+`]}`, n-1)
}

// List is a JSON array of n records: [{"a":0},…], the form a push snapshot takes.
func List(n int64) io.Reader {
	if n == 0 {
		return strings.NewReader(`[]`)
	}
	return Repeat(`[`, Record+",", Record+`]`, n-1)
}

// chunk is how much plain text one gzip member holds.
const chunk = 1 << 20

var (
	membersOnce sync.Once
	// members: the gzip members of `{"results":[`, of 1 MiB of `{"a":0},`, of 1 MiB of blanks, of `{"a":0}]}`
	// and of `0}]}`.
	headMember, recordsMember, blanksMember, tailMember, blankTailMember []byte
)

func gzipped(s string) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write([]byte(s))
	_ = zw.Close()
	return buf.Bytes()
}

func loadMembers() {
	membersOnce.Do(func() {
		headMember = gzipped(`{"results":[`)
		recordsMember = gzipped(strings.Repeat(Record+",", chunk/(len(Record)+1)))
		blanksMember = gzipped(strings.Repeat(" ", chunk))
		tailMember = gzipped(Record + `]}`)
		blankTailMember = gzipped(`0}]}`)
	})
}

// GzipRecords is a page of records, gzip-compressed, that inflates to about plain bytes: a gzip body is any
// number of members in a row, so one member of 1 MiB of records is sent again and again. DEFLATE compresses
// at most about 1:1000, so a GiB takes about a MB of body; an operator that stops at its budget reads the first
// tens of kilobytes.
func GzipRecords(plain int64) func() io.Reader {
	loadMembers()
	return func() io.Reader {
		return io.MultiReader(bytes.NewReader(headMember), Repeat("", string(recordsMember), "", plain/chunk), bytes.NewReader(tailMember))
	}
}

// GzipList is a JSON array of records, gzip-compressed, that inflates to about plain bytes, as GzipRecords: a
// push snapshot as the operator stores it.
func GzipList(plain int64) func() io.Reader {
	loadMembers()
	head, tail := gzipped(`[`), gzipped(Record+`]`)
	return func() io.Reader {
		return io.MultiReader(bytes.NewReader(head), Repeat("", string(recordsMember), "", plain/chunk), bytes.NewReader(tail))
	}
}

// GzipBlankRecord is a page of one record that holds about plain bytes of blanks, gzip-compressed:
// {"results":[{"a":      …      0}]}.
func GzipBlankRecord(plain int64) func() io.Reader {
	loadMembers()
	head := gzipped(`{"results":[{"a":`)
	return func() io.Reader {
		return io.MultiReader(bytes.NewReader(head), Repeat("", string(blanksMember), "", plain/chunk), bytes.NewReader(blankTailMember))
	}
}

// Slowloris answers 200 and the start of a page at once, then one byte of records every interval, flushed,
// until the client goes away: each byte comes well within any read timeout, the page never ends.
func Slowloris(every time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		flusher, _ := w.(http.Flusher)
		_, _ = io.WriteString(w, `{"results":[`)
		body := Record + ","
		for i := 0; ; i++ {
			if flusher != nil {
				flusher.Flush()
			}
			select {
			case <-r.Context().Done():
				return
			case <-time.After(every):
			}
			if _, err := w.Write([]byte{body[i%len(body)]}); err != nil {
				return
			}
		}
	})
}

// SlowReader reads r one byte every interval until ctx ends: a post that trickles.
func SlowReader(ctx context.Context, r io.Reader, every time.Duration) io.Reader {
	return &slowReader{ctx: ctx, r: r, every: every}
}

type slowReader struct {
	ctx   context.Context
	r     io.Reader
	every time.Duration
}

func (s *slowReader) Read(p []byte) (int, error) {
	select {
	case <-s.ctx.Done():
		return 0, s.ctx.Err()
	case <-time.After(s.every):
	}
	if len(p) == 0 {
		return 0, nil
	}
	return s.r.Read(p[:1])
}
