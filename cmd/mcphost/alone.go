package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/mcphost/mcphost/host"
)

// loadAlone starts a host serving only the plugin at path, under name, in
// the default sandbox (no grants, no watching, no lock file). extra is
// appended to its [[plugin]] table (TOML lines such as `timeout = "10s"`).
// The config goes through the same parser as mcphost.toml, so the plugin
// gets exactly the defaults a user's config would give it.
func loadAlone(ctx context.Context, name, path, extra string, opts host.Options) (*host.Host, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", path, err)
	}
	text := fmt.Sprintf("[server]\nwatch = false\nlock_file = \"off\"\n[[plugin]]\nname = %q\npath = %q\n%s", name, abs, extra)
	cfg, err := host.ParseConfig("alone.toml", []byte(text))
	if err != nil {
		return nil, err
	}
	cfg.Path = "" // no file: a reload (a plugin announcing a list change) re-reads none
	return host.New(ctx, cfg, opts)
}
