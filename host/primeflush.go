package host

import (
	"net/http"
	"sync"
	"time"
)

// primeDelay is how long the first flush of a stateful POST's answer may
// wait for more of the answer to go with it.
const primeDelay = 5 * time.Millisecond

// coalescePriming holds back, for at most primeDelay, the first flush of
// the answer to a POST of an open session. With an event store, go-sdk
// answers such a POST as an SSE stream whose first event is a priming
// event (an ID to resume from, 2025-11-25 §2.1.6), written and flushed
// alone before the request is even handled: one more write to the socket
// per call than a server without resumable streams makes, which the
// client must also read. Held back, the priming event leaves with the
// answer when the answer comes within primeDelay (an ordinary call), and
// alone after primeDelay otherwise, so a client whose slow call's stream
// breaks still has an ID to resume from. Every write and flush still
// happens, in order: only the moment of the first flush moves.
func coalescePriming(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") == "" {
			next.ServeHTTP(w, r)
			return
		}
		pw := &primeWriter{ResponseWriter: w}
		defer pw.finish()
		next.ServeHTTP(pw, r)
	})
}

// primeWriter is the ResponseWriter coalescePriming hands go-sdk. go-sdk
// writes to it from the goroutine that answers the request, not only from
// the handler's; mu orders those writes with the timer's flush.
type primeWriter struct {
	http.ResponseWriter
	mu      sync.Mutex
	flushed bool        // a flush was asked for
	timer   *time.Timer // the held-back first flush, while it is held
	done    bool        // the handler returned: the timer must not flush
}

// Write implements http.ResponseWriter.
func (w *primeWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ResponseWriter.Write(b)
}

// WriteHeader implements http.ResponseWriter.
func (w *primeWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ResponseWriter.WriteHeader(code)
}

// FlushError is what http.ResponseController's Flush, which go-sdk calls,
// finds first: the first flush is held back, any later one flushes what
// was held too.
func (w *primeWriter) FlushError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.flushed {
		w.flushed = true
		w.timer = time.AfterFunc(primeDelay, w.flushHeld)
		return nil
	}
	w.stopTimer()
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Flush implements http.Flusher, for a writer that asserts it.
func (w *primeWriter) Flush() { _ = w.FlushError() }

// Unwrap gives http.ResponseController the writer below for what this one
// does not implement (deadlines).
func (w *primeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// flushHeld is the held-back flush, primeDelay after it was asked for.
func (w *primeWriter) flushHeld() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done || w.timer == nil {
		return
	}
	w.timer = nil
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// finish runs when the handler returns (net/http then sends what is
// buffered): the timer must no longer touch the writer.
func (w *primeWriter) finish() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	w.stopTimer()
}

func (w *primeWriter) stopTimer() {
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
}
