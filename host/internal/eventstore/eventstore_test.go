package eventstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// replay collects what After yields for index; err is its error, if any.
func replay(s mcp.EventStore, session, stream string, index int) ([]string, error) {
	var out []string
	for data, err := range s.After(context.Background(), session, stream, index) {
		if err != nil {
			return out, err
		}
		out = append(out, string(data))
	}
	return out, nil
}

// TestStoreAgreesWithGoSDKsWithinItsBounds: as long as nothing has to be
// dropped, Store replays exactly what go-sdk's MemoryEventStore does, for
// random interleavings of sessions, streams, events (empty ones too, as
// go-sdk's priming events are) and resumption points.
func TestStoreAgreesWithGoSDKsWithinItsBounds(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		ours, theirs := New(), mcp.NewMemoryEventStore(nil)
		type key struct{ session, stream string }
		var opened []key
		for op := range 400 {
			switch r := rng.IntN(10); {
			case r < 2 || len(opened) == 0:
				k := key{fmt.Sprint("s", rng.IntN(3)), fmt.Sprint("st", op)}
				opened = append(opened, k)
				ours.Open(ctx, k.session, k.stream)
				theirs.Open(ctx, k.session, k.stream)
			case r < 8:
				k := opened[rng.IntN(len(opened))]
				var data []byte
				if rng.IntN(4) > 0 {
					data = fmt.Appendf(nil, "event %d", op)
				}
				ours.Append(ctx, k.session, k.stream, data)
				theirs.Append(ctx, k.session, k.stream, data)
			case r < 9:
				session := fmt.Sprint("s", rng.IntN(3))
				ours.SessionClosed(ctx, session)
				theirs.SessionClosed(ctx, session)
				opened = slices.DeleteFunc(opened, func(k key) bool { return k.session == session })
			default:
				k := opened[rng.IntN(len(opened))]
				index := rng.IntN(8) - 1
				got, gotErr := replay(ours, k.session, k.stream, index)
				want, wantErr := replay(theirs, k.session, k.stream, index)
				if !slices.Equal(got, want) || (gotErr == nil) != (wantErr == nil) {
					t.Fatalf("round %d, op %d: After(%v, %d) = %q, %v; go-sdk's store: %q, %v",
						round, op, k, index, got, gotErr, want, wantErr)
				}
			}
		}
	}
}

// TestOneLongSessionStaysBounded: every call of a stateful session opens a
// stream. go-sdk's store keeps one entry per stream until the session ends
// (164 MiB after a million calls); Store keeps the latest MaxStreams.
func TestOneLongSessionStaysBounded(t *testing.T) {
	ctx := context.Background()
	s := newStore(1<<20, 64)
	for i := range 100_000 {
		id := fmt.Sprint(i)
		s.Open(ctx, "session", id)
		s.Append(ctx, "session", id, nil)
		s.Append(ctx, "session", id, make([]byte, 100))
	}
	if sessions, streams, bytes := s.counts(); sessions != 1 || streams != 64 || bytes != 64*(100+streamOverhead) {
		t.Errorf("after 100,000 calls: %d sessions, %d streams, %d bytes; want 1, 64, %d", sessions, streams, bytes, 64*(100+streamOverhead))
	}
	if got, err := replay(s, "session", "99999", 0); err != nil || len(got) != 1 || len(got[0]) != 100 {
		t.Errorf("the latest stream: %d events, %v; want its one event after the priming one", len(got), err)
	}
	if _, err := replay(s, "session", "0", 0); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("the first stream: error %v, want ErrEventsPurged", err)
	}
}

// TestBytesAreBoundedAcrossSessions: past MaxBytes, the streams least
// recently written to go first, whichever session they belong to; one
// still written to stays.
func TestBytesAreBoundedAcrossSessions(t *testing.T) {
	ctx := context.Background()
	s := newStore(1000, 1024)
	s.Open(ctx, "a", "standalone")
	s.Append(ctx, "a", "standalone", []byte("first"))
	for i := range 50 {
		id := fmt.Sprint(i)
		s.Open(ctx, "b", id)
		s.Append(ctx, "b", id, make([]byte, 100))
		s.Append(ctx, "a", "standalone", []byte("tick"))
	}
	if _, _, bytes := s.counts(); bytes > 1000 {
		t.Errorf("%d bytes kept, bound 1000", bytes)
	}
	got, err := replay(s, "a", "standalone", -1)
	if err != nil || len(got) != 51 || got[0] != "first" {
		t.Errorf("the stream written to all along: %d events (%v), want all 51", len(got), err)
	}
	if _, err := replay(s, "b", "0", -1); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("the oldest stream of b: %v, want ErrEventsPurged", err)
	}
}

// TestOneStreamOverTheBoundKeepsItsNewestEvents: a stream alone over
// MaxBytes loses its oldest events, and resuming from before them fails
// rather than skipping them.
func TestOneStreamOverTheBoundKeepsItsNewestEvents(t *testing.T) {
	ctx := context.Background()
	s := newStore(streamOverhead+100, 1024)
	s.Open(ctx, "a", "long")
	for i := range 30 {
		s.Append(ctx, "a", "long", fmt.Appendf(nil, "event-%02d", i)) // 8 bytes each
	}
	if _, _, bytes := s.counts(); bytes > streamOverhead+100 {
		t.Errorf("%d bytes kept, bound %d", bytes, streamOverhead+100)
	}
	if _, err := replay(s, "a", "long", 0); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("resuming after event 0: %v, want ErrEventsPurged", err)
	}
	got, err := replay(s, "a", "long", 27)
	if err != nil || !slices.Equal(got, []string{"event-28", "event-29"}) {
		t.Errorf("resuming after event 27: %q, %v", got, err)
	}
}

// TestADroppedStreamIsNotRevived: events appended to a stream the store
// dropped are not kept under a numbering that starts again at 0, which
// would replay the wrong events.
func TestADroppedStreamIsNotRevived(t *testing.T) {
	ctx := context.Background()
	s := newStore(1<<20, 2)
	s.Open(ctx, "a", "old")
	s.Append(ctx, "a", "old", []byte("old-0"))
	s.Open(ctx, "a", "x")
	s.Open(ctx, "a", "y") // drops "old"
	s.Append(ctx, "a", "old", []byte("old-1"))
	if got, err := replay(s, "a", "old", 0); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("After(old, 0) = %q, %v; want ErrEventsPurged", got, err)
	}
}

func TestSessionClosedForgetsItsStreams(t *testing.T) {
	ctx := context.Background()
	s := New()
	for i := range 10 {
		s.Open(ctx, "a", fmt.Sprint(i))
		s.Append(ctx, "a", fmt.Sprint(i), []byte("data"))
	}
	s.Open(ctx, "b", "kept")
	s.Append(ctx, "b", "kept", []byte("data"))
	s.SessionClosed(ctx, "a")
	if sessions, streams, bytes := s.counts(); sessions != 1 || streams != 1 || bytes != 4+streamOverhead {
		t.Errorf("after closing a: %d sessions, %d streams, %d bytes; want 1, 1, %d", sessions, streams, bytes, 4+streamOverhead)
	}
}

// TestManySessionsStayBounded: streams count against the bound even
// without events, so a client opening sessions and streams without end
// cannot grow the store past it.
func TestManySessionsStayBounded(t *testing.T) {
	ctx := context.Background()
	s := newStore(10*streamOverhead, 1024)
	for i := range 1000 {
		s.Open(ctx, fmt.Sprint("session-", i), "stream")
	}
	if sessions, streams, bytes := s.counts(); sessions != 10 || streams != 10 || bytes != 10*streamOverhead {
		t.Errorf("after 1,000 sessions of one empty stream: %d sessions, %d streams, %d bytes; want the latest 10", sessions, streams, bytes)
	}
	if _, err := replay(s, "session-999", "stream", -1); err != nil {
		t.Errorf("the latest session's stream: %v", err)
	}
}
