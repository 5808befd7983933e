package listcache

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host/internal/plugin"
)

func newCache(t *testing.T) (*Cache, *bytes.Buffer) {
	t.Helper()
	var log bytes.Buffer
	c, err := Open(t.TempDir(), hclog.New(&hclog.LoggerOptions{Output: &log, Level: hclog.Debug}))
	if err != nil {
		t.Fatal(err)
	}
	return c, &log
}

func entry(key string) *Entry {
	return &Entry{Key: key, Digest: strings.Repeat("ab", 32), File: FileKey{Size: 3, Inode: 7},
		Description: plugin.Description{ABIVersion: 1, Flavor: plugin.FlavorMCPHost, Exports: []string{"list_tools"},
			Lists: []plugin.ListCall{{Export: "list_tools", Output: []byte(`{"tools":[]}`)}}}}
}

func TestEntryRoundTrip(t *testing.T) {
	c, _ := newCache(t)
	key := c.Key([]byte("settings"))
	if c.Key([]byte("other settings")) == key {
		t.Fatal("two settings, one key")
	}
	if err := c.Put(entry(key)); err != nil {
		t.Fatal(err)
	}
	got := c.Get(key, "p")
	if got == nil || got.Digest != entry(key).Digest || string(got.Description.Lists[0].Output) != `{"tools":[]}` {
		t.Fatalf("Get = %+v", got)
	}
	if err := c.Remove(key); err != nil || c.Get(key, "p") != nil {
		t.Fatalf("after Remove: %v, %+v", err, c.Get(key, "p"))
	}
}

// TestUnusableEntriesAreIgnored: an entry edited, torn, of another key or
// of another host build is not used (and the first three are logged).
func TestUnusableEntriesAreIgnored(t *testing.T) {
	for name, spoil := range map[string]func(c *Cache, path string){
		"edited": func(_ *Cache, path string) {
			b, _ := os.ReadFile(path)
			os.WriteFile(path, bytes.Replace(b, []byte("list_tools"), []byte("list_toolz"), 1), 0o600)
		},
		"torn": func(_ *Cache, path string) {
			b, _ := os.ReadFile(path)
			os.WriteFile(path, b[:len(b)-5], 0o600)
		},
		"another key": func(c *Cache, path string) {
			e := entry("someone-else")
			c.Put(e)
			os.Rename(c.path("someone-else"), path)
		},
		"another build": func(c *Cache, path string) {
			c.build = "another"
		},
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := newCache(t)
			key := c.Key([]byte("settings"))
			if err := c.Put(entry(key)); err != nil {
				t.Fatal(err)
			}
			spoil(c, c.path(key))
			if got := c.Get(key, "p"); got != nil {
				t.Fatalf("an unusable entry was used: %+v", got)
			}
		})
	}
}

func TestOversizeEntriesAreNeitherWrittenNorRead(t *testing.T) {
	c, _ := newCache(t)
	key := c.Key([]byte("settings"))
	e := entry(key)
	e.Description.Lists[0].Output = bytes.Repeat([]byte("x"), MaxEntryBytes)
	if err := c.Put(e); err == nil {
		t.Fatal("an entry over MaxEntryBytes was written")
	}
	if err := os.WriteFile(c.path(key), bytes.Repeat([]byte("x"), MaxEntryBytes+10), 0o600); err != nil {
		t.Fatal(err)
	}
	if c.Get(key, "p") != nil {
		t.Fatal("an oversize file was used")
	}
	if files, _ := filepath.Glob(filepath.Join(c.dir, "*.tmp")); len(files) != 0 {
		t.Fatalf("temporary files left: %v", files)
	}
}

// TestFIFOEntryIsAMiss: a FIFO in place of an entry is not opened for
// good (which would wait for a writer): it is a miss, logged with its
// path, and the next Put replaces it.
func TestFIFOEntryIsAMiss(t *testing.T) {
	c, log := newCache(t)
	key := c.Key([]byte("settings"))
	if err := mkfifo(c.path(key)); err != nil {
		t.Skip(err)
	}
	got := make(chan *Entry, 1)
	go func() { got <- c.Get(key, "p") }()
	select {
	case e := <-got:
		if e != nil {
			t.Fatalf("Get of a FIFO = %+v", e)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Get blocked on a FIFO")
	}
	if !strings.Contains(log.String(), c.path(key)) || !strings.Contains(log.String(), "not a regular file") {
		t.Errorf("the log does not name the FIFO:\n%s", log)
	}
	if err := c.Put(entry(key)); err != nil {
		t.Fatal(err)
	}
	if c.Get(key, "p") == nil {
		t.Fatal("the entry written over the FIFO is not read")
	}
}
