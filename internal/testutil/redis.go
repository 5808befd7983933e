package testutil

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// redisPatience bounds how long a redis-server may take to start: a hang
// guard for a loaded machine, not a deadline anything is measured by.
const redisPatience = 60 * time.Second

// FindRedisServer returns the redis-server executable, or valkey-server
// (which takes the same arguments), or "". Debian installs them in
// /usr/bin; the other directories cover a PATH that lacks it.
func FindRedisServer() string {
	for _, name := range []string{"redis-server", "valkey-server"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		for _, dir := range []string{"/usr/bin", "/usr/sbin", "/usr/local/bin"} {
			p := filepath.Join(dir, name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return p
			}
		}
	}
	return ""
}

// Redis is a redis-server (or valkey-server) started for one test, on a
// loopback port and a Unix socket of its own, without persistence: the
// shared task store of replicas ([server.tasks] store).
type Redis struct {
	// Addr is the server's host:port on 127.0.0.1.
	Addr string
	// Sock is the path of its Unix socket (mode 700).
	Sock string

	t    testing.TB
	bin  string
	dir  string
	port int
	args []string // given after the port and the persistence settings
	log  string
	// cmd is the running server, nil once killed; exited tells when it
	// ended.
	cmd    *exec.Cmd
	exited chan error
}

// StartRedis starts a redis-server of its own for t, killed when t ends,
// or skips t (saying how to install it) where neither redis-server nor
// valkey-server is installed; scripts/ensure-redis.sh installs it, and
// `make test` runs that first. args are added to the server's command line
// (after the port and persistence settings, so they may override them).
func StartRedis(t testing.TB, args ...string) *Redis {
	t.Helper()
	bin := FindRedisServer()
	if bin == "" {
		t.Skip("redis-server is not installed, so this test of the shared task store cannot run: " +
			"install it with `sudo apt-get install redis-server` or scripts/ensure-redis.sh (as root)")
	}
	dir := t.TempDir()
	r := &Redis{t: t, bin: bin, dir: dir, args: args, Sock: filepath.Join(dir, "redis.sock"), log: filepath.Join(dir, "redis.log")}
	// A port found free may be taken before redis-server binds it: try
	// another then.
	var err error
	for range 5 {
		r.port = freeLoopbackPort(t)
		r.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(r.port))
		if err = r.start(); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(r.Kill)
	return r
}

// freeLoopbackPort returns a TCP port free on 127.0.0.1 a moment ago.
func freeLoopbackPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// URL is the redis:// URL of the server's database 0.
func (r *Redis) URL() string { return "redis://" + r.Addr + "/0" }

// start starts the server on r.port and waits until its socket answers.
func (r *Redis) start() error {
	args := []string{"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", r.dir, "--unixsocket", r.Sock, "--unixsocketperm", "700", "--logfile", r.log, "--daemonize", "no"}
	args = append(args, r.args...)
	cmd := exec.Command(r.bin, args...)
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // ends with the process, which Kill ends
	deadline := time.Now().Add(redisPatience)
	for {
		select {
		case err := <-exited:
			b, _ := os.ReadFile(r.log)
			return fmt.Errorf("%s exited at start (%v):\n%s", r.bin, err, b)
		default:
		}
		if c, err := net.DialTimeout("unix", r.Sock, time.Second); err == nil {
			c.Close()
			r.cmd, r.exited = cmd, exited
			return nil
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("%s did not open %s in %v", r.bin, r.Sock, redisPatience)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Kill stops the server at once, as a crash would, and waits until it is
// gone. Killing it again does nothing.
func (r *Redis) Kill() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	<-r.exited
	r.cmd = nil
}

// Restart kills the server and starts it again on the same port and
// socket, empty.
func (r *Redis) Restart() {
	r.t.Helper()
	r.Kill()
	os.Remove(r.Sock)
	if err := r.start(); err != nil {
		r.t.Fatalf("restart %s on %s: %v", r.bin, r.Addr, err)
	}
}
