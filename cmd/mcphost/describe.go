package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host"
)

const describeUsage = "usage: mcphost plugin describe [--check] [--config-value KEY=VALUE]... [--allow-path DIR=GUEST]... [--allow-host HOST]... [-o OUT.wasm] FILE.wasm"

// runDescribe loads one plugin alone, as `plugin test` does, and writes
// what it lists into its module (a custom section), so that a host with
// no cached description serves its lists without compiling it; --check
// only compares the description the module ships with what it lists.
func runDescribe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet(strings.TrimPrefix(describeUsage, "usage: "))
	check := fs.Bool("check", false, "write nothing: fail unless FILE ships a description that matches what it lists")
	out := fs.String("o", "", "write the described module to `OUT.wasm` instead of replacing FILE")
	pluginConfig := keyValues{}
	fs.Var(pluginConfig, "config-value", "`KEY=VALUE` handed to the plugin as config while it is listed, with --check only (repeatable)")
	paths := keyValues{}
	fs.Var(paths, "allow-path", "`DIR=GUEST`: grant the directory DIR at GUEST while it is listed, as allowed_paths does (repeatable)")
	var hosts listFlag
	fs.Var(&hosts, "allow-host", "`HOST`: let the plugin reach HOST over HTTP while it is listed, as allowed_hosts does (repeatable)")
	if err := parseArgs(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &usageError{describeUsage}
	}
	if *check && *out != "" {
		return &usageError{"plugin describe: --check writes nothing; -o has no use with it"}
	}
	if !*check && len(pluginConfig) > 0 {
		// A host uses a shipped description only for a plugin configured
		// without config or env: one made with config would never be used.
		return &usageError{"plugin describe: --config-value only with --check: a host lists a plugin from its shipped description only when it has no config or env, so the description is made without them"}
	}
	path := fs.Arg(0)
	wasm, err := host.ReadModuleFile(path)
	if err != nil {
		return fmt.Errorf("describe %s: %w", path, err)
	}
	extra := "timeout = \"30s\"\n" + grants{paths: paths, hosts: hosts}.toml()
	extra += configTOML(pluginConfig)
	logger := hclog.New(&hclog.LoggerOptions{Name: "mcphost", Level: hclog.Warn, Output: stderr})
	h, err := loadAlone(ctx, "described", path, extra, host.Options{Logger: logger, LoadEveryPlugin: true})
	if err != nil {
		return fmt.Errorf("describe %s: %w", path, err)
	}
	info := h.Plugins()[0]
	_ = h.Close(context.WithoutCancel(ctx))
	if info.Description == nil {
		why := info.ShippedDescription
		if why == "" {
			why = fmt.Sprintf("it is a %s plugin, whose lists are read from its running instance every time", info.Flavor)
		}
		return fmt.Errorf("describe %s: its description cannot ship: %s", path, why)
	}
	counts := fmt.Sprintf("%d tools, %d resources, %d resource templates, %d prompts", len(info.Tools), len(info.Resources), len(info.Templates), len(info.Prompts))
	if *check {
		switch status := info.ShippedDescription; {
		case status == "":
			return fmt.Errorf("%s ships no description: run `mcphost plugin describe %s` after building it", path, path)
		case strings.HasPrefix(status, "matches its lists"):
			fmt.Fprintf(stdout, "%s: ships a description that %s (%s)\n", path, status, counts)
			return nil
		default:
			return fmt.Errorf("%s: the description it ships %s", path, status)
		}
	}
	described, err := host.EmbedDescription(wasm, info.Description)
	if err != nil {
		return fmt.Errorf("describe %s: %w", path, err)
	}
	dest := path
	if *out != "" {
		dest = *out
	}
	if err := writeFileAtomically(dest, described); err != nil {
		return fmt.Errorf("describe %s: %w", path, err)
	}
	sum := sha256.Sum256(described)
	fmt.Fprintf(stdout, "%s: described (%s; %d bytes of description), sha256 %s\n", dest, counts, len(info.Description), hex.EncodeToString(sum[:]))
	return nil
}

// writeFileAtomically replaces the file at path with data: a temporary
// file beside it, renamed over it, so that a host watching it sees the old
// module or the new one, never a part. A file that existed keeps its mode.
func writeFileAtomically(path string, data []byte) error {
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // nothing once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// runWarm loads every plugin of a config from its module, as validate
// does, and records what it learns in the config's cache_dir: compiled
// code and descriptions. A host started later on that cache_dir (in a
// container image built with it, say) compiles nothing.
func runWarm(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseFlags("plugin warm", args, stdout, stderr)
	if err != nil {
		return err
	}
	cfg, err := host.LoadConfig(f.config)
	if err != nil {
		return err
	}
	level := "warn"
	if f.logLevel != "" {
		level = f.logLevel
	}
	cfg.Server.Watch = false
	began := time.Now()
	h, err := host.New(ctx, cfg, host.Options{Logger: newLogger(level, stderr), Version: buildVersion(), Warm: true})
	if err != nil {
		return fmt.Errorf("%s: %w", f.config, err)
	}
	plugins, dir := h.Plugins(), h.CacheDir()
	if err := h.Close(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("%s: %w", f.config, err)
	}
	// The counts are taken once every compiled module is written (each
	// plugin was released once listed; Close waited for that).
	after := countCacheFiles(dir)
	fmt.Fprintf(stdout, "%s: warmed %d plugin(s) into %s in %s: %d compiled module(s), %d description(s) cached\n",
		f.config, len(plugins), dir, time.Since(began).Round(time.Millisecond), after.compiled, after.descriptions)
	return nil
}

// cacheFiles counts what a cache_dir holds.
type cacheFiles struct{ compiled, descriptions int }

// countCacheFiles counts the compiled modules (files in wazero's
// directories) and the descriptions (lists/) under dir.
func countCacheFiles(dir string) cacheFiles {
	var c cacheFiles
	if dir == "" {
		return c
	}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || strings.HasSuffix(path, ".tmp") {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		switch {
		case strings.HasPrefix(rel, "lists"+string(filepath.Separator)):
			c.descriptions++
		case strings.Contains(rel, "wazero-"):
			c.compiled++
		}
		return nil
	})
	return c
}
