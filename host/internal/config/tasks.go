package config

import (
	"fmt"
	"net/url"
	"time"
)

// Tasks is [server.tasks]: the tasks of the Tasks extension
// (io.modelcontextprotocol/tasks), which run a plugin's long calls past a
// request and keep their results for the client to fetch.
type Tasks struct {
	// Store is where tasks are kept: "" or "memory" in this process (the
	// default, for one host), or a Redis or Valkey URL (redis://,
	// rediss://, unix://) shared by every replica behind a load balancer.
	Store string
	// TTL is how long a task and its result are kept after it is created
	// (ttlMs); a task still running then is stopped. 0 is DefaultTaskTTL.
	TTL time.Duration
	// MaxRunning bounds the tasks this process runs at once; a call that
	// would start another is refused. 0 is DefaultMaxRunningTasks.
	MaxRunning int
	// PollInterval is the polling interval suggested to clients
	// (pollIntervalMs). 0 is DefaultTaskPollInterval.
	PollInterval time.Duration
	// MaxKept bounds the tasks the memory store keeps, ended ones
	// included until their TTL; a call that would create another is
	// refused. 0 is DefaultMaxKeptTasks. A shared store is bounded by its
	// server's own memory settings.
	MaxKept int
}

// Defaults and bounds of [server.tasks] and of a plugin's task_timeout.
const (
	DefaultTaskTTL          = time.Hour
	DefaultTaskPollInterval = time.Second
	DefaultMaxRunningTasks  = 64
	MaxMaxRunningTasks      = 100000
	DefaultMaxKeptTasks     = 10000
	MaxMaxKeptTasks         = 10000000
	DefaultTaskTimeout      = 10 * time.Minute
)

// CheckTaskStore checks the value of [server.tasks] store.
func CheckTaskStore(store string) error {
	switch store {
	case "", "memory":
		return nil
	}
	u, err := url.Parse(store)
	if err != nil {
		return fmt.Errorf("not a URL (expected \"memory\", or redis://host:port, rediss://host:port or unix:///path for a shared store): %v", redactedURLError(err))
	}
	switch u.Scheme {
	case "redis", "rediss":
		if u.Host == "" {
			return fmt.Errorf("%s has no host (expected %s://host:port[/db])", u.Redacted(), u.Scheme)
		}
	case "unix":
		if u.Path == "" {
			return fmt.Errorf("%s has no socket path (expected unix:///path/to/socket)", u.Redacted())
		}
	default:
		return fmt.Errorf("scheme %q is not one of memory, redis://, rediss://, unix://", u.Scheme)
	}
	return nil
}

// redactedURLError is a url.Parse error without the URL, which may hold a
// password.
func redactedURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// TaskTimeoutOf returns the deadline of a run of p's calls as a task.
func TaskTimeoutOf(p Plugin) time.Duration {
	if p.TaskTimeout > 0 {
		return p.TaskTimeout
	}
	return max(DefaultTaskTimeout, p.Timeout)
}
