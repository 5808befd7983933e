package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultRedisPrefix begins every key and the channel of a Redis store
// whose RedisOptions.Prefix is empty.
const DefaultRedisPrefix = "mcphost:"

// DefaultRedisConnectTimeout bounds the PING of NewRedis when
// RedisOptions.ConnectTimeout is zero.
const DefaultRedisConnectTimeout = 2 * time.Second

// RedisOptions tunes NewRedis; the zero value is the default.
type RedisOptions struct {
	// Prefix begins every key the store writes and the name of its
	// channel, so that several deployments can share one database; ""
	// is DefaultRedisPrefix. Every replica of one deployment must use
	// the same prefix.
	Prefix string
	// ConnectTimeout bounds the PING with which NewRedis checks that the
	// server answers, and Subscribe's wait for the server to confirm a
	// subscription; 0 is DefaultRedisConnectTimeout.
	ConnectTimeout time.Duration
}

// Redis is a Store in Redis or Valkey, shared by every replica that
// opens it with the same URL and prefix. Each task is one key,
// <prefix>task:<id>, holding the task's JSON and expiring at Task.Expires;
// Publish and Subscribe use the pub/sub channel <prefix>changed.
type Redis struct {
	c       *redis.Client
	prefix  string
	channel string
	// where names the server in errors (host:port or the socket's path);
	// secrets are the URL's password, which no error may carry.
	where   string
	secrets []string
	// timeout bounds the wait for a subscription's confirmation.
	timeout time.Duration

	mu     sync.Mutex
	subs   map[*redis.PubSub]struct{}
	closed bool
}

// updateAttempts bounds how many times Update tries again when another
// writer changed the task between its read and its write.
const updateAttempts = 100

// subscribeBuffer is how many published IDs a subscription holds for a
// slow reader, subscribeSendTimeout how long a full buffer may hold up the
// subscription before an ID is dropped (Store.Subscribe allows a slow
// subscriber to lose some).
const (
	subscribeBuffer      = 256
	subscribeSendTimeout = time.Second
)

// NewRedis connects to the Redis (or Valkey) server at url and checks that
// it answers a PING within opts.ConnectTimeout; it fails at once, naming
// the server, when it does not.
//
// url is redis://[user:password@]host:port[/db] for TCP, rediss://… for
// TLS (verified against the system's roots), or
// unix://[user:password@]/path/to/socket[?db=N]; go-redis's query
// parameters (dial_timeout, pool_size, …) are accepted too. No error
// carries the password.
func NewRedis(ctx context.Context, url string, opts RedisOptions) (*Redis, error) {
	secrets := urlPassword(url)
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, scrub(fmt.Errorf("tasks store: the Redis URL %s is not valid: %w", redactURL(url), err), secrets)
	}
	// A caller's deadline bounds each command, not only go-redis's own
	// read and write timeouts.
	o.ContextTimeoutEnabled = true
	r := &Redis{prefix: opts.Prefix, where: o.Addr, secrets: secrets, subs: map[*redis.PubSub]struct{}{}}
	if r.prefix == "" {
		r.prefix = DefaultRedisPrefix
	}
	r.channel = r.prefix + "changed"
	timeout := opts.ConnectTimeout
	if timeout <= 0 {
		timeout = DefaultRedisConnectTimeout
	}
	r.timeout = timeout
	// The PING goes through a client of its own that tries once: an
	// address that refuses or a server that does not answer is reported
	// now, not after go-redis's retries (which the store's own client
	// keeps, to ride out a restart of the server).
	po := *o
	po.MaxRetries, po.DialerRetries, po.PoolSize = -1, 1, 1
	probe := redis.NewClient(&po)
	pctx, cancel := context.WithTimeout(ctx, timeout)
	err = probe.Ping(pctx).Err()
	// The read deadline (pctx's) may fire a moment before pctx ends.
	var ne net.Error
	timedOut := ctx.Err() == nil && (pctx.Err() != nil || errors.As(err, &ne) && ne.Timeout())
	cancel()
	probe.Close()
	if err != nil {
		if timedOut {
			err = fmt.Errorf("no answer to PING in %v: %w", timeout, err)
		}
		return nil, r.fail("connect to", err)
	}
	r.c = redis.NewClient(o)
	return r, nil
}

// key is the key of the task id.
func (r *Redis) key(id string) string { return r.prefix + "task:" + id }

// fail wraps err with what was being done and the server, without the
// URL's password.
func (r *Redis) fail(what string, err error) error {
	return scrub(fmt.Errorf("tasks store: %s Redis at %s: %w", what, r.where, err), r.secrets)
}

// Create implements Store: SET NX with PXAT Task.Expires, one command, so
// that the task is written with its expiry or not at all.
func (r *Redis) Create(ctx context.Context, t *Task) error {
	if t.Expires.UnixMilli() <= 0 {
		return fmt.Errorf("create task %s: it has no expiry (Task.Expires is %v)", t.ID, t.Expires)
	}
	b, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("encode task %s: %w", t.ID, err)
	}
	err = r.c.Do(ctx, "set", r.key(t.ID), b, "nx", "pxat", t.Expires.UnixMilli()).Err()
	if errors.Is(err, redis.Nil) {
		return fmt.Errorf("create task %s: %w", t.ID, ErrExists)
	}
	if err != nil {
		return r.fail("create task "+t.ID+" in", err)
	}
	return nil
}

// Get implements Store.
func (r *Redis) Get(ctx context.Context, id string) (*Task, error) {
	b, err := r.c.Get(ctx, r.key(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("get task %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, r.fail("get task "+id+" from", err)
	}
	return decode(id, b)
}

// errConflict marks an attempt of Update that another writer overtook.
var errConflict = errors.New("the task changed while it was being updated")

// Update implements Store as an optimistic transaction: WATCH the key and
// read it, apply change, and write it in MULTI/EXEC with SET XX KEEPTTL
// (the task keeps the expiry it was created with); when another writer got
// there first, EXEC does nothing and Update tries again, up to
// updateAttempts times with a growing random pause between tries.
func (r *Redis) Update(ctx context.Context, id string, change func(*Task) error) (*Task, error) {
	key := r.key(id)
	for attempt := 1; ; attempt++ {
		t, err := r.updateOnce(ctx, id, key, change)
		if !errors.Is(err, errConflict) {
			return t, err
		}
		if attempt == updateAttempts {
			return nil, fmt.Errorf("update task %s: %d attempts in a row were overtaken by other writers, giving up: %w", id, attempt, errConflict)
		}
		// Up to 1, 2, 4, … 32 ms: writers that collided spread out.
		pause := time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt-1, 5)))
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return nil, fmt.Errorf("update task %s: %w", id, ctx.Err())
		}
	}
}

// updateOnce makes one attempt of Update, in two round trips on one
// connection: WATCH and GET together, then MULTI, SET and EXEC. It returns
// errConflict when another writer overtook it.
func (r *Redis) updateOnce(ctx context.Context, id, key string, change func(*Task) error) (*Task, error) {
	var (
		t         *Task
		changeErr error
		missing   bool
	)
	// No keys: the WATCH goes in one pipeline with the GET.
	err := r.c.Watch(ctx, func(tx *redis.Tx) error {
		var get *redis.StringCmd
		_, err := tx.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Do(ctx, "watch", key)
			get = p.Get(ctx, key)
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		b, err := get.Bytes()
		if err == nil {
			t, err = decode(id, b)
		}
		if err == nil {
			changeErr = change(t)
		}
		if err != nil || changeErr != nil {
			// No EXEC will end the WATCH: end it before the connection
			// goes back to the pool.
			if uerr := tx.Unwatch(ctx).Err(); uerr != nil && err == nil && changeErr == nil {
				err = uerr
			}
			if errors.Is(err, redis.Nil) {
				missing = true
				return nil
			}
			return err
		}
		nb, err := json.Marshal(t)
		if err != nil {
			tx.Unwatch(ctx)
			return fmt.Errorf("encode task %s: %w", id, err)
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			// XX: a key that expired meanwhile is not written back
			// without its expiry.
			p.Do(ctx, "set", key, nb, "xx", "keepttl")
			return nil
		})
		if errors.Is(err, redis.Nil) {
			missing = true
			return nil
		}
		return err
	})
	switch {
	case errors.Is(err, redis.TxFailedErr):
		return nil, errConflict
	case err != nil:
		return nil, r.fail("update task "+id+" in", err)
	case changeErr != nil:
		return nil, changeErr // as is (Store.Update)
	case missing:
		return nil, fmt.Errorf("update task %s: %w", id, ErrNotFound)
	}
	return t, nil
}

// Publish implements Store: PUBLISH on the store's channel.
func (r *Redis) Publish(ctx context.Context, id string) error {
	if err := r.c.Publish(ctx, r.channel, id).Err(); err != nil {
		return r.fail("publish task "+id+" on", err)
	}
	return nil
}

// Subscribe implements Store with a Redis subscription to the store's
// channel, confirmed by the server before Subscribe returns: an ID
// published after that reaches it. go-redis keeps the subscription: when
// the connection breaks (a restart, a failover) it reconnects and
// subscribes again, and what was published in between is lost (the owner
// of a task rereads it when it renews its lease). The subscription ends
// when ctx does, or with Close.
func (r *Redis) Subscribe(ctx context.Context) (<-chan string, error) {
	ps := r.c.Subscribe(ctx, r.channel)
	// The confirmation: until it comes, a PUBLISH may not reach us.
	cctx, cancel := context.WithTimeout(ctx, r.timeout)
	_, err := ps.Receive(cctx)
	cancel()
	if err != nil {
		ps.Close()
		return nil, r.fail("subscribe to "+r.channel+" on", err)
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		ps.Close()
		return nil, fmt.Errorf("tasks store: subscribe to %s on Redis at %s: the store is closed", r.channel, r.where)
	}
	r.subs[ps] = struct{}{}
	r.mu.Unlock()
	msgs := ps.Channel(redis.WithChannelSize(subscribeBuffer), redis.WithChannelSendTimeout(subscribeSendTimeout))
	out := make(chan string)
	go func() { // owned by ctx (and Close, which closes msgs)
		defer close(out)
		defer func() {
			r.mu.Lock()
			delete(r.subs, ps)
			r.mu.Unlock()
			ps.Close()
		}()
		for {
			select {
			case <-ctx.Done():
				return
			case m, ok := <-msgs:
				if !ok {
					return
				}
				select {
				case out <- m.Payload:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// Close implements Store: it ends the subscriptions still open and closes
// the connections.
func (r *Redis) Close() error {
	r.mu.Lock()
	r.closed = true
	for ps := range r.subs {
		ps.Close()
	}
	r.mu.Unlock()
	if err := r.c.Close(); err != nil {
		return r.fail("close the connections to", err)
	}
	return nil
}

// urlPassword returns the password in a Redis URL as written and, when it
// differs, as decoded; none if it has no password. A URL that does not
// parse is read as well as can be: what lies between the scheme's "://",
// the first ":" and the last "@" is taken for the password, so that an
// error quoting the URL hides it.
func urlPassword(raw string) []string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return nil
	}
	_, p, ok := strings.Cut(rest[:at], ":")
	if !ok || p == "" {
		return nil
	}
	secrets := []string{p}
	if d, err := url.PathUnescape(p); err == nil && d != p && d != "" {
		secrets = append(secrets, d)
	}
	return secrets
}

// redactURL returns raw with its password (urlPassword) hidden.
func redactURL(raw string) string {
	if !strings.Contains(raw, "://") {
		return "(not a URL)"
	}
	for _, p := range urlPassword(raw) {
		raw = strings.ReplaceAll(raw, p, "xxxxx")
	}
	return raw
}

// scrub returns err with every occurrence of the secrets hidden; an error
// whose text had one is cut from its chain, so that nothing unwrapped from
// it carries the secret either.
func scrub(err error, secrets []string) error {
	msg := err.Error()
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, "xxxxx")
	}
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}
