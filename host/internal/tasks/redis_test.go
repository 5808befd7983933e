package tasks_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcphost/mcphost/host/internal/tasks"
	"github.com/mcphost/mcphost/host/internal/tasks/storetest"
	"github.com/mcphost/mcphost/internal/testutil"
)

// patience bounds every wait of these tests: nothing is expected to take
// more than a fraction of it, and a loaded machine must not fail them.
const patience = 30 * time.Second

// freePort returns a TCP port free on 127.0.0.1 a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// prefixes makes each pair of handles of TestRedis a store of its own on
// the shared server.
var prefixes atomic.Int64

// openRedis returns a store onto url, closed when t ends.
func openRedis(t testing.TB, url string, opts tasks.RedisOptions) *tasks.Redis {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	r, err := tasks.NewRedis(ctx, url, opts)
	if err != nil {
		t.Fatalf("NewRedis: %v", err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

// TestRedis runs the tests of every Store on two Redis clients of one
// redis-server, as two replicas hold it.
func TestRedis(t *testing.T) {
	s := testutil.StartRedis(t)
	storetest.Run(t, func(t *testing.T) (tasks.Store, tasks.Store) {
		opts := tasks.RedisOptions{Prefix: fmt.Sprintf("test%d:", prefixes.Add(1))}
		return openRedis(t, s.URL(), opts), openRedis(t, s.URL(), opts)
	})
}

// TestRedisUnixSocket runs the same tests over unix://, one handle on the
// socket and one on TCP.
func TestRedisUnixSocket(t *testing.T) {
	s := testutil.StartRedis(t)
	storetest.Run(t, func(t *testing.T) (tasks.Store, tasks.Store) {
		opts := tasks.RedisOptions{Prefix: fmt.Sprintf("unix%d:", prefixes.Add(1))}
		return openRedis(t, "unix://"+s.Sock+"?db=0", opts), openRedis(t, s.URL(), opts)
	})
}

// TestRedisKeys checks what the store writes: one key per task under the
// prefix, holding its JSON and expiring when the task does, an expiry
// Update keeps; and the channel Publish uses.
func TestRedisKeys(t *testing.T) {
	s := testutil.StartRedis(t)
	ctx := context.Background()
	store := openRedis(t, s.URL(), tasks.RedisOptions{})
	raw := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer raw.Close()

	now := time.Now().UTC().Truncate(time.Millisecond)
	task := &tasks.Task{ID: "t-keys", Status: tasks.Working, CreatedAt: now, UpdatedAt: now, Expires: now.Add(time.Hour)}
	if err := store.Create(ctx, task); err != nil {
		t.Fatal(err)
	}
	keys, err := raw.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0] != "mcphost:task:t-keys" {
		t.Fatalf("keys after one Create = %q, want [mcphost:task:t-keys]", keys)
	}
	expiresAt := func() int64 {
		t.Helper()
		ms, err := raw.Do(ctx, "pexpiretime", "mcphost:task:t-keys").Int64()
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	if got := expiresAt(); got != task.Expires.UnixMilli() {
		t.Fatalf("PEXPIRETIME = %d, want Task.Expires %d", got, task.Expires.UnixMilli())
	}
	if _, err := store.Update(ctx, task.ID, func(x *tasks.Task) error { x.Status = tasks.InputRequired; return nil }); err != nil {
		t.Fatal(err)
	}
	if got := expiresAt(); got != task.Expires.UnixMilli() {
		t.Fatalf("PEXPIRETIME after Update = %d, want Task.Expires %d still", got, task.Expires.UnixMilli())
	}
	if b, err := raw.Get(ctx, "mcphost:task:t-keys").Bytes(); err != nil || !strings.Contains(string(b), `"status":"input_required"`) {
		t.Fatalf("the key holds %s, %v; want the task's JSON", b, err)
	}

	// A task created with an expiry already past is never found.
	gone := &tasks.Task{ID: "t-gone", Status: tasks.Working, Expires: now.Add(-time.Second)}
	if err := store.Create(ctx, gone); err != nil {
		t.Fatalf("Create of an expired task: %v", err)
	}
	if _, err := store.Get(ctx, gone.ID); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("Get of a task created expired = %v, want ErrNotFound", err)
	}
	// A task without an expiry is refused: it would stay forever.
	err = store.Create(ctx, &tasks.Task{ID: "t-forever", Status: tasks.Working})
	if err == nil || !strings.Contains(err.Error(), "t-forever") || !strings.Contains(err.Error(), "no expiry") {
		t.Fatalf("Create without Expires = %v, want an error naming the task and its missing expiry", err)
	}

	// Publish uses mcphost:changed.
	sub := raw.Subscribe(ctx, "mcphost:changed")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if err := store.Publish(ctx, "t-keys"); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, patience)
	defer cancel()
	m, err := sub.ReceiveMessage(rctx)
	if err != nil || m.Payload != "t-keys" {
		t.Fatalf("on mcphost:changed: %+v, %v; want t-keys", m, err)
	}
}

// TestRedisWrongAddressFailsFast checks that NewRedis reports a server
// that is not there, or does not answer, at once and by its address. It
// needs no redis-server.
func TestRedisWrongAddressFailsFast(t *testing.T) {
	ctx := context.Background()
	refused := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	start := time.Now()
	_, err := tasks.NewRedis(ctx, "redis://"+refused+"/0", tasks.RedisOptions{})
	if err == nil || !strings.Contains(err.Error(), refused) {
		t.Fatalf("NewRedis on a closed port = %v, want an error naming %s", err, refused)
	}
	t.Logf("closed port, after %v: %v", time.Since(start).Round(time.Millisecond), err)
	if d := time.Since(start); d > patience {
		t.Fatalf("NewRedis on a closed port took %v", d)
	}

	// A listener that accepts and never answers.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	held := make(chan net.Conn, 16)
	go func() { // ends when l closes
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held <- c
		}
	}()
	defer func() {
		for {
			select {
			case c := <-held:
				c.Close()
			default:
				return
			}
		}
	}()
	silent := l.Addr().String()
	start = time.Now()
	_, err = tasks.NewRedis(ctx, "redis://"+silent, tasks.RedisOptions{ConnectTimeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), silent) || !strings.Contains(err.Error(), "no answer to PING in 300ms") {
		t.Fatalf("NewRedis on a silent server = %v, want an error naming %s and the PING", err, silent)
	}
	t.Logf("silent server, after %v: %v", time.Since(start).Round(time.Millisecond), err)
	if d := time.Since(start); d > patience {
		t.Fatalf("NewRedis on a silent server took %v", d)
	}

	// A URL that is not one, or of another scheme.
	for _, u := range []string{"http://127.0.0.1:6379", "redis://127.0.0.1:6379/notadb", "unix://"} {
		if _, err := tasks.NewRedis(ctx, u, tasks.RedisOptions{}); err == nil || !strings.Contains(err.Error(), "not valid") {
			t.Errorf("NewRedis(%q) = %v, want an error saying the URL is not valid", u, err)
		}
	}
}

// TestRedisPasswordNeverInErrors checks that no error of the store carries
// the password of its URL: not a wrong one, not a right one once the
// server is gone, not one in a URL that does not parse.
func TestRedisPasswordNeverInErrors(t *testing.T) {
	const right, wrong = "right-pw-0d8f1", "wrong-pw-7c2e9"
	s := testutil.StartRedis(t, "--requirepass", right)
	ctx := context.Background()
	check := func(what string, err error, secret string) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("%s: the error carries the password: %v", what, err)
		}
		for e := errors.Unwrap(err); e != nil; e = errors.Unwrap(e) {
			if strings.Contains(e.Error(), secret) {
				t.Fatalf("%s: an error wrapped in the error carries the password: %v", what, e)
			}
		}
		t.Logf("%s: %v", what, err)
	}

	_, err := tasks.NewRedis(ctx, "redis://:"+wrong+"@"+s.Addr+"/0", tasks.RedisOptions{})
	check("wrong password", err, wrong)
	if !strings.Contains(err.Error(), s.Addr) {
		t.Fatalf("wrong password: %v, want the error to name %s", err, s.Addr)
	}
	_, err = tasks.NewRedis(ctx, "redis://default:"+wrong+"@"+s.Addr+"/0", tasks.RedisOptions{})
	check("wrong password with a user", err, wrong)
	_, err = tasks.NewRedis(ctx, "redis://"+s.Addr+"/0", tasks.RedisOptions{})
	if err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Fatalf("no password = %v, want NOAUTH", err)
	}
	for _, u := range []string{
		"redis://user:" + right + "@" + s.Addr + ":notaport/0",
		"redis://user:" + right + "@" + s.Addr + "/notadb",
		"redis://user:" + right + "@%zz/0",
		"unix://user:" + right + "@",
	} {
		_, err := tasks.NewRedis(ctx, u, tasks.RedisOptions{})
		check("the URL "+strings.ReplaceAll(u, right, "…"), err, right)
	}

	store := openRedis(t, "redis://:"+right+"@"+s.Addr+"/0", tasks.RedisOptions{})
	now := time.Now()
	if err := store.Create(ctx, &tasks.Task{ID: "t-pw", Status: tasks.Working, Expires: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Get(ctx, "t-pw"); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	// Each operation gets its own time: go-redis tries each again a few
	// times before it gives up.
	octx := func() context.Context {
		c, cancel := context.WithTimeout(ctx, patience)
		t.Cleanup(cancel)
		return c
	}
	_, err = store.Get(octx(), "t-pw")
	check("Get from a stopped server", err, right)
	if !strings.Contains(err.Error(), "t-pw") || !strings.Contains(err.Error(), s.Addr) {
		t.Fatalf("Get from a stopped server: %v, want the task and the server named", err)
	}
	_, err = store.Update(octx(), "t-pw", func(*tasks.Task) error { return nil })
	check("Update on a stopped server", err, right)
	err = store.Create(octx(), &tasks.Task{ID: "t-pw2", Status: tasks.Working, Expires: now.Add(time.Minute)})
	check("Create on a stopped server", err, right)
	check("Publish on a stopped server", store.Publish(octx(), "t-pw"), right)
	_, err = store.Subscribe(octx())
	check("Subscribe on a stopped server", err, right)
}

// TestRedisSubscribeSurvivesRestart kills redis-server under a
// subscription and starts it again: go-redis subscribes again, and what is
// published after the restart reaches the subscriber.
func TestRedisSubscribeSurvivesRestart(t *testing.T) {
	s := testutil.StartRedis(t)
	a := openRedis(t, s.URL(), tasks.RedisOptions{})
	b := openRedis(t, s.URL(), tasks.RedisOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, err := b.Subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Subscribe returns once the server confirmed it: the first Publish
	// reaches it.
	if err := a.Publish(ctx, "t-before"); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-events:
		if id != "t-before" {
			t.Fatalf("delivered %q, want t-before", id)
		}
	case <-time.After(patience):
		t.Fatalf("a Publish right after Subscribe did not arrive in %v", patience)
	}

	s.Restart()

	// Publishes until one arrives: the subscription comes back when
	// go-redis notices the broken connection and reconnects.
	start := time.Now()
	deadline := time.After(patience)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for n := 0; ; n++ {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		lastErr = a.Publish(pctx, "t-after")
		pcancel()
		select {
		case id, ok := <-events:
			if !ok {
				t.Fatal("the subscription ended with the restart")
			}
			if id != "t-after" {
				t.Fatalf("delivered %q after the restart, want t-after", id)
			}
			t.Logf("subscription back %v after the restart (%d publishes)", time.Since(start).Round(time.Millisecond), n+1)
			cancel()
			for range events { // closes with ctx
			}
			return
		case <-tick.C:
		case <-deadline:
			t.Fatalf("nothing published after the restart arrived in %v (last Publish: %v)", patience, lastErr)
		}
	}
}

// TestRedisCloseEndsSubscriptions checks that Close ends the
// subscriptions of the store, and that Subscribe after it fails.
func TestRedisCloseEndsSubscriptions(t *testing.T) {
	s := testutil.StartRedis(t)
	r, err := tasks.NewRedis(context.Background(), s.URL(), tasks.RedisOptions{})
	if err != nil {
		t.Fatal(err)
	}
	events, err := r.Subscribe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case _, ok := <-events:
		if ok {
			t.Fatal("a subscription delivered an ID after Close")
		}
	case <-time.After(patience):
		t.Fatalf("the subscription did not end in %v after Close", patience)
	}
	if _, err := r.Subscribe(context.Background()); err == nil {
		t.Fatal("Subscribe after Close succeeded")
	}
}

// TestRedisUpdateGivesUpOnEndlessContention makes every attempt of an
// Update lose to another writer: Update gives up with an error naming the
// task, and the other writer's changes stand.
func TestRedisUpdateGivesUpOnEndlessContention(t *testing.T) {
	s := testutil.StartRedis(t)
	ctx := context.Background()
	a := openRedis(t, s.URL(), tasks.RedisOptions{})
	b := openRedis(t, s.URL(), tasks.RedisOptions{})
	now := time.Now()
	if err := a.Create(ctx, &tasks.Task{ID: "t-busy", Status: tasks.Working, Expires: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	calls := 0
	_, err := a.Update(ctx, "t-busy", func(x *tasks.Task) error {
		calls++
		// Another replica writes between this read and its write, every
		// time.
		_, err := b.Update(ctx, "t-busy", func(y *tasks.Task) error { y.StatusMessage = strconv.Itoa(calls); return nil })
		x.Status = tasks.Completed
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "t-busy") || !strings.Contains(err.Error(), "overtaken") {
		t.Fatalf("Update under endless contention = %v, want an error naming the task and the contention", err)
	}
	t.Logf("after %d calls of change: %v", calls, err)
	got, err := b.Get(ctx, "t-busy")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != tasks.Working || got.StatusMessage != strconv.Itoa(calls) {
		t.Fatalf("after the abandoned Update: %+v; want the other writer's %d changes and no other", got, calls)
	}
}

// TestRedisTLS runs a store over rediss:// against a redis-server serving
// TLS only, with a certificate made here; and checks that rediss:// on a
// server without TLS fails at once, naming it.
func TestRedisTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	selfSigned(t, cert, key)
	port := strconv.Itoa(freePort(t))
	s := testutil.StartRedis(t, "--port", "0", "--tls-port", port, "--tls-cert-file", cert, "--tls-key-file", key,
		"--tls-ca-cert-file", cert, "--tls-auth-clients", "no")
	addr := net.JoinHostPort("127.0.0.1", port)
	opts := tasks.RedisOptions{Prefix: "tls:"}
	// The certificate is this test's own: skip_verify, which only a test
	// may use.
	a := openRedis(t, "rediss://"+addr+"/0?skip_verify=true", opts)
	b := openRedis(t, "unix://"+s.Sock, opts)
	ctx := context.Background()
	if err := a.Create(ctx, &tasks.Task{ID: "t-tls", Status: tasks.Working, Expires: time.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, "t-tls"); err != nil {
		t.Fatalf("Get through the socket of a task created over TLS: %v", err)
	}
	// Verified against the system's roots, the certificate is refused.
	_, err := tasks.NewRedis(ctx, "rediss://"+addr+"/0", tasks.RedisOptions{})
	if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("rediss:// to an unknown certificate = %v, want a certificate error naming %s", err, addr)
	}

	plain := testutil.StartRedis(t)
	_, err = tasks.NewRedis(ctx, "rediss://"+plain.Addr+"/0", tasks.RedisOptions{ConnectTimeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), plain.Addr) {
		t.Fatalf("rediss:// to a server without TLS = %v, want an error naming %s", err, plain.Addr)
	}
	t.Logf("rediss:// to a server without TLS: %v", err)
}

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T, certFile, keyFile string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "redis test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRedisUpdateLeavesNoWatch checks that an Update that writes nothing
// (its change failed, or the task is gone) ends its WATCH: otherwise the
// connection goes back to the pool still watching, and the next Update on
// it fails for a change to another task. With one connection in the pool,
// each later Update calls its change once.
func TestRedisUpdateLeavesNoWatch(t *testing.T) {
	s := testutil.StartRedis(t)
	ctx := context.Background()
	a := openRedis(t, s.URL()+"?pool_size=1", tasks.RedisOptions{})
	b := openRedis(t, s.URL(), tasks.RedisOptions{})
	exp := time.Now().Add(time.Minute)
	for _, id := range []string{"t-x", "t-y"} {
		if err := a.Create(ctx, &tasks.Task{ID: id, Status: tasks.Working, Expires: exp}); err != nil {
			t.Fatal(err)
		}
	}
	updateY := func(after string) {
		t.Helper()
		calls := 0
		if _, err := a.Update(ctx, "t-y", func(x *tasks.Task) error { calls++; x.StatusMessage = after; return nil }); err != nil {
			t.Fatal(err)
		}
		if calls != 1 {
			t.Fatalf("after %s, an Update of another task called its change %d times: the connection was still watching", after, calls)
		}
	}

	stop := errors.New("no change")
	if _, err := a.Update(ctx, "t-x", func(*tasks.Task) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("aborted Update = %v", err)
	}
	if _, err := b.Update(ctx, "t-x", func(x *tasks.Task) error { x.StatusMessage = "b"; return nil }); err != nil {
		t.Fatal(err)
	}
	updateY("an aborted update")

	if _, err := a.Update(ctx, "t-absent", func(*tasks.Task) error { return nil }); !errors.Is(err, tasks.ErrNotFound) {
		t.Fatalf("Update of an absent task = %v", err)
	}
	if err := b.Create(ctx, &tasks.Task{ID: "t-absent", Status: tasks.Working, Expires: exp}); err != nil {
		t.Fatal(err)
	}
	updateY("an update of an absent task")
}
