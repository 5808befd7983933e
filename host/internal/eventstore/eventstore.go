// Package eventstore keeps the events the host sends on a stateful
// session's streams, so that a client whose stream broke can resume it
// (Streamable HTTP, Last-Event-ID), within fixed bounds on memory.
//
// go-sdk's MemoryEventStore bounds the events' bytes but keeps an entry for
// every stream a session ever opened until the session closes, and every
// POST opens one: one session making a million calls held 164 MiB, with
// its data capped at 10 MiB. Store keeps at most MaxStreams streams per
// session and MaxBytes of events in all, dropping the streams least
// recently written to first.
package eventstore

import (
	"container/list"
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// MaxBytes bounds the events kept, all sessions together (go-sdk's
	// default for its own store), each stream counted streamOverhead
	// bytes more than its events: a client opening sessions and streams
	// without end cannot grow the store past it either.
	MaxBytes = 10 << 20
	// MaxStreams bounds the streams kept per session. Resuming is for the
	// streams a client has just lost: its latest calls, and its standalone
	// stream, which stays recent as long as it is written to.
	MaxStreams = 1024
)

// Store is an mcp.EventStore bounded in memory (see the package
// documentation). The zero value is not usable; call New.
type Store struct {
	mu         sync.Mutex
	maxBytes   int
	maxStreams int
	bytes      int
	sessions   map[string]*session
	recent     list.List // every *stream, least recently written first
}

type session struct {
	streams map[string]*stream
	recent  list.List // the session's *stream, least recently written first
}

// stream is one stream's events still kept: data[i] is the event of index
// first+i (go-sdk numbers a stream's events from 0, in the order they are
// appended).
type stream struct {
	session, id string
	first       int
	data        [][]byte
	size        int
	inAll       *list.Element // in Store.recent
	inSession   *list.Element // in session.recent
}

// streamOverhead is about what the store holds for a stream besides its
// events: the stream, its map entry and its two list elements.
const streamOverhead = 256

// New returns an empty Store with the package's bounds.
func New() *Store { return newStore(MaxBytes, MaxStreams) }

func newStore(maxBytes, maxStreams int) *Store {
	return &Store{maxBytes: maxBytes, maxStreams: maxStreams, sessions: map[string]*session{}}
}

var _ mcp.EventStore = (*Store)(nil)

// Open implements mcp.EventStore: it starts keeping the events of a new
// stream.
func (s *Store) Open(_ context.Context, sessionID, streamID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.sessions[sessionID]
	if sess == nil {
		sess = &session{streams: map[string]*stream{}}
		s.sessions[sessionID] = sess
	}
	if sess.streams[streamID] != nil {
		return nil
	}
	st := &stream{session: sessionID, id: streamID, size: streamOverhead}
	st.inAll = s.recent.PushBack(st)
	st.inSession = sess.recent.PushBack(st)
	sess.streams[streamID] = st
	s.bytes += streamOverhead
	if len(sess.streams) > s.maxStreams {
		s.drop(sess.recent.Front().Value.(*stream))
	}
	s.shrink(st)
	return nil
}

// Append implements mcp.EventStore: it keeps data as the stream's next
// event. The events of a stream the store no longer holds (dropped to stay
// within its bounds) are not kept: the stream's numbering is lost with it,
// and it cannot be resumed.
func (s *Store) Append(_ context.Context, sessionID, streamID string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.sessions[sessionID]
	if sess == nil {
		return nil
	}
	st := sess.streams[streamID]
	if st == nil {
		return nil
	}
	st.data = append(st.data, data)
	st.size += len(data)
	s.bytes += len(data)
	s.recent.MoveToBack(st.inAll)
	sess.recent.MoveToBack(st.inSession)
	s.shrink(st)
	return nil
}

// shrink drops the streams least recently written to, other than keep,
// until the store is within its bound; if keep alone is over it, keep's
// oldest events go, its newest stays.
func (s *Store) shrink(keep *stream) {
	for s.bytes > s.maxBytes {
		if oldest := s.recent.Front().Value.(*stream); oldest != keep {
			s.drop(oldest)
			continue
		}
		if len(keep.data) <= 1 {
			return
		}
		keep.size -= len(keep.data[0])
		s.bytes -= len(keep.data[0])
		keep.data[0] = nil
		keep.data = keep.data[1:]
		keep.first++
	}
}

// drop forgets st and its events, and its session once it has no stream.
func (s *Store) drop(st *stream) {
	sess := s.sessions[st.session]
	delete(sess.streams, st.id)
	sess.recent.Remove(st.inSession)
	s.recent.Remove(st.inAll)
	s.bytes -= st.size
	if len(sess.streams) == 0 {
		delete(s.sessions, st.session)
	}
}

// After implements mcp.EventStore: the events of the stream after index,
// or an error (mcp.ErrEventsPurged) when the store no longer holds all of
// them.
func (s *Store) After(_ context.Context, sessionID, streamID string, index int) iter.Seq2[[]byte, error] {
	events, err := s.after(sessionID, streamID, index)
	return func(yield func([]byte, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		for _, e := range events {
			if !yield(e, nil) {
				return
			}
		}
	}
}

func (s *Store) after(sessionID, streamID string, index int) ([][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st *stream
	if sess := s.sessions[sessionID]; sess != nil {
		st = sess.streams[streamID]
	}
	if st == nil {
		return nil, fmt.Errorf("stream %q of session %q is not kept (never opened, or dropped to bound memory): %w",
			streamID, sessionID, mcp.ErrEventsPurged)
	}
	start := index + 1 - st.first
	switch {
	case start < 0:
		return nil, fmt.Errorf("stream %q of session %q: events after %d: %w", streamID, sessionID, index, mcp.ErrEventsPurged)
	case start >= len(st.data):
		return nil, nil
	}
	// A copy: Append may drop the kept slice's first elements.
	return slices.Clone(st.data[start:]), nil
}

// SessionClosed implements mcp.EventStore: it forgets the session's
// streams.
func (s *Store) SessionClosed(_ context.Context, sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess := s.sessions[sessionID]; sess != nil {
		for _, st := range sess.streams {
			s.drop(st)
		}
	}
	return nil
}

// counts returns how many sessions and streams the store holds and the
// bytes it counts (events and streamOverhead per stream).
func (s *Store) counts() (sessions, streams, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions), s.recent.Len(), s.bytes
}
