package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcphost/mcphost/host"
)

// listFlag is a flag that may be given more than once.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// runPush publishes a .wasm file to a registry as a Wasm OCI artifact.
func runPush(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcphost plugin push [--insecure] [--asks FILE] [--asks-host HOST]... [--asks-path GUEST]... [--asks-env NAME]... [--asks-memory-mb N] FILE.wasm oci://REGISTRY/REPO:TAG")
	insecure := fs.Bool("insecure", false, "plain HTTP, to a registry on loopback only")
	asksFile := fs.String("asks", "", "a JSON file of the grants the plugin asks for, as in its manifest annotation (e.g. the plugin's grants.json); the --asks-* flags add to it")
	var hosts, paths, env listFlag
	fs.Var(&hosts, "asks-host", "a host the plugin asks to reach (allowed_hosts); repeatable")
	fs.Var(&paths, "asks-path", "a guest directory the plugin asks to have mounted (allowed_paths); repeatable")
	fs.Var(&env, "asks-env", "an environment variable the plugin asks for (env); repeatable")
	memory := fs.Int("asks-memory-mb", 0, "the memory cap the plugin asks for (memory_mb)")
	if err := parseArgs(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return &usageError{"usage: " + fs.synopsis}
	}
	grants, err := requestedGrants(*asksFile, hosts, paths, env, *memory)
	if err != nil {
		return fmt.Errorf("push: %w", err)
	}
	wasm, err := host.ReadModuleFile(fs.Arg(0))
	if err != nil {
		return fmt.Errorf("push: %w", err)
	}
	// A module no host would load is not published.
	if _, err := host.CheckModule(wasm); err != nil {
		return fmt.Errorf("push %s: %w", fs.Arg(0), err)
	}
	if !strings.HasPrefix(string(wasm), "\x00asm") {
		return fmt.Errorf("push: %s is not a WebAssembly module", fs.Arg(0))
	}
	digest, err := host.PushPlugin(ctx, wasm, fs.Arg(1), grants, *insecure)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pushed %s\n  digest %s\n", fs.Arg(1), digest)
	return nil
}

// requestedGrants is what push writes into the manifest: the grants of
// the JSON file asksFile (if not "") with the --asks-* flags added; nil
// when nothing is asked. A file with an unknown key or a value of the
// wrong type is refused, naming it, rather than published without it.
func requestedGrants(asksFile string, hosts, paths, env []string, memoryMB int) (*host.RequestedGrants, error) {
	g := &host.RequestedGrants{}
	if asksFile != "" {
		b, err := os.ReadFile(asksFile)
		if err != nil {
			return nil, fmt.Errorf("--asks: %w", err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(g); err != nil {
			return nil, fmt.Errorf("--asks %s: want a JSON object with allowed_hosts, allowed_paths, env (lists of strings) and memory_mb (a number): %w", asksFile, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("--asks %s: more than one JSON value", asksFile)
		}
	}
	g.AllowedHosts = append(g.AllowedHosts, hosts...)
	g.AllowedPaths = append(g.AllowedPaths, paths...)
	g.Env = append(g.Env, env...)
	if memoryMB > 0 {
		g.MemoryMB = memoryMB
	}
	if g.MemoryMB < 0 {
		return nil, fmt.Errorf("--asks %s: memory_mb is negative (%d)", asksFile, g.MemoryMB)
	}
	if len(g.AllowedHosts)+len(g.AllowedPaths)+len(g.Env) == 0 && g.MemoryMB == 0 {
		return nil, nil
	}
	return g, nil
}

// storeSettings returns the [server] settings of the config at path, or
// the defaults when there is no such file.
func storeSettings(path string) (host.Config, error) {
	cfg, err := host.LoadConfig(path)
	if err == nil {
		return *cfg, nil
	}
	if _, statErr := os.Stat(path); errors.Is(statErr, fs.ErrNotExist) {
		return host.Config{}, nil
	}
	return host.Config{}, err
}

// runPull fetches a plugin into the plugin store.
func runPull(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcphost plugin pull [--config FILE] [--insecure] [--sha256 HEX] REF")
	config := fs.String("config", "mcphost.toml", "config file whose plugin store to fill (the default store when it does not exist)")
	insecure := fs.Bool("insecure", false, "plain HTTP, to a registry on loopback only")
	sum := fs.String("sha256", "", "the sha256 an https:// plugin must have")
	if err := parseArgs(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &usageError{"usage: " + fs.synopsis}
	}
	cfg, err := storeSettings(*config)
	if err != nil {
		return err
	}
	p, err := host.PullPlugin(ctx, cfg.Server, fs.Arg(0), strings.ToLower(*sum), *insecure)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pulled %s\n  digest %s\n  store  %s\n", p.Ref, p.Digest, p.Store)
	return nil
}

// runUpdate resolves the plugins' tags again and pins what they name now.
func runUpdate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcphost plugin update [--config FILE] [NAME...]")
	config := fs.String("config", "mcphost.toml", "config file")
	if err := parseArgs(fs, args, stdout, stderr); err != nil {
		return err
	}
	cfg, err := host.LoadConfig(*config)
	if err != nil {
		return err
	}
	updates, err := host.UpdateSources(ctx, cfg, fs.Args(), newLogger("warn", stderr))
	for _, u := range updates {
		if u.Old == u.New {
			fmt.Fprintf(stdout, "%s: %s is up to date (%s)\n", u.Plugin, u.Ref, u.New)
		} else {
			fmt.Fprintf(stdout, "%s: %s now pinned to %s (was %s) in %s\n", u.Plugin, u.Ref, u.New, orNone(u.Old), cfg.Server.LockFile)
		}
	}
	return err
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// inspectRemote pulls ref into the default plugin store and inspects the
// module, adding the digest and what its artifact asks for.
func inspectRemote(ctx context.Context, ref string, insecure bool) (*inspection, error) {
	p, err := host.PullPlugin(ctx, host.Config{}.Server, ref, "", insecure)
	if err != nil {
		return nil, fmt.Errorf("inspect: %w", err)
	}
	dir, err := os.MkdirTemp("", "mcphost-inspect-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "plugin.wasm")
	if err := os.WriteFile(file, p.Wasm, 0o600); err != nil {
		return nil, err
	}
	in, err := inspect(ctx, file)
	if err != nil {
		return nil, err
	}
	in.File, in.Digest = ref, p.Digest
	in.Asks = []string{}
	if g := p.Grants; g != nil {
		for _, h := range g.AllowedHosts {
			in.Asks = append(in.Asks, "network: "+h)
		}
		for _, d := range g.AllowedPaths {
			in.Asks = append(in.Asks, "files: "+d)
		}
		for _, e := range g.Env {
			in.Asks = append(in.Asks, "environment: "+e)
		}
		if g.MemoryMB > 0 {
			in.Asks = append(in.Asks, fmt.Sprintf("memory: %d MiB", g.MemoryMB))
		}
	}
	return in, nil
}

// runSign signs a plugin in a registry with a private key.
func runSign(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcphost plugin sign --key KEY.pem [--cert CERT.pem] [--insecure] oci://REGISTRY/REPO:TAG")
	key := fs.String("key", "", "unencrypted PEM ECDSA P-256 private key (openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256)")
	cert := fs.String("cert", "", "PEM certificate of the key, issued to your identity by a CA of the verifier's trusted root (keyless)")
	insecure := fs.Bool("insecure", false, "plain HTTP, to a registry on loopback only")
	if err := parseArgs(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() != 1 || *key == "" {
		return &usageError{"usage: " + fs.synopsis}
	}
	digest, err := host.SignPlugin(ctx, fs.Arg(0), *key, *cert, *insecure)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "signed %s\n  digest %s\n", fs.Arg(0), digest)
	return nil
}
