package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"

	"github.com/mcphost/mcphost/host/internal/config"
	"github.com/mcphost/mcphost/host/internal/registry"
)

// sourcePin is what the lock file records of a plugin fetched from a
// registry: the reference as configured and the manifest digest it was
// resolved to. A start loads the pinned digest from the store without
// asking the registry, so a tag that moved is not taken until `mcphost
// plugin update`.
type sourcePin struct {
	Ref    string `json:"ref"`
	Digest string `json:"digest"`
}

// remoteModule is a plugin read from the plugin store.
type remoteModule struct {
	wasm []byte
	// pin is what to record in the lock file (nil: nothing, as for an
	// https:// source or a reference that names a digest).
	pin *sourcePin
	// grants are what the artifact asks for (nil: it says nothing).
	grants *registry.Grants
}

// registryClient returns the client that fetches remote plugins into the
// plugin store ([server] plugin_store, else the cache directory's store).
func registryClient(s config.Server) (*registry.Client, error) {
	dir := s.PluginStore
	if dir == "" {
		var err error
		if dir, err = registry.DefaultStoreDir(s.CacheDir); err != nil {
			return nil, err
		}
	}
	return &registry.Client{Store: registry.Store{Dir: dir}}, nil
}

// pinnedDigest returns the digest the lock file pins pc's reference to, or
// "" when it pins none (or pins another reference).
func pinnedDigest(lockPath string, pc config.Plugin) (string, error) {
	if lockPath == "" {
		return "", nil
	}
	lock, err := readLock(lockPath)
	if err != nil {
		return "", err
	}
	if pin, ok := lock.Sources[pc.Name]; ok && pin.Ref == pc.Source {
		return pin.Digest, nil
	}
	return "", nil
}

// fetchRemote reads the plugin pc.Source names from the plugin store,
// fetching what the store lacks: a tag resolves to the digest the lock file
// pins it to, and only when there is none is the registry asked.
func (h *Host) fetchRemote(ctx context.Context, pc config.Plugin) (*remoteModule, error) {
	fail := func(err error) (*remoteModule, error) {
		return nil, fmt.Errorf("load plugin %q from %s: %w", pc.Name, pc.Source, err)
	}
	ref, err := registry.ParseRef(pc.Source)
	if err != nil {
		return fail(err)
	}
	client, err := registryClient(h.settings)
	if err != nil {
		return fail(err)
	}
	if ref.Scheme == registry.SchemeHTTPS {
		b, err := client.FetchURL(ctx, ref, pc.SHA256)
		if err != nil {
			return fail(err)
		}
		if err := h.checkSignature(pc); err != nil {
			return fail(err)
		}
		return &remoteModule{wasm: b}, nil
	}
	digest := ref.Digest
	var pin *sourcePin
	if digest == "" {
		if digest, err = pinnedDigest(h.settings.LockFile, pc); err != nil {
			return fail(fmt.Errorf("%w (the pinned digest cannot be read)", err))
		}
		if digest == "" {
			if digest, err = client.Resolve(ctx, ref, pc.Insecure); err != nil {
				return fail(fmt.Errorf("%w (nothing pinned in the lock file to start from)", err))
			}
			h.logger.Info("plugin tag resolved; pinning it in the lock file", "plugin", pc.Name, "ref", pc.Source, "digest", digest)
		}
		pin = &sourcePin{Ref: pc.Source, Digest: digest}
	}
	mod, err := client.Open(digest)
	if err != nil {
		if !errors.Is(err, registry.ErrNotStored) {
			h.logger.Warn("plugin store entry unusable; fetching it again", "plugin", pc.Name, "ref", pc.Source, "error", err)
		}
		if mod, err = client.Pull(ctx, ref, digest, pc.Insecure); err != nil {
			return fail(fmt.Errorf("%w (not in the plugin store %s either)", err, client.Store.Dir))
		}
	}
	if err := h.checkSignature(pc); err != nil {
		return fail(err)
	}
	return &remoteModule{wasm: mod.Wasm, pin: pin, grants: mod.Grants}, nil
}

// checkSignature refuses a remote plugin without a verified signature,
// unless its config opts out (which is logged at warn on every load).
func (h *Host) checkSignature(pc config.Plugin) error {
	if pc.SkipSignature {
		h.logger.Warn("plugin signature NOT verified (skip_signature = true): anyone who can write to its source can change what runs",
			"plugin", pc.Name, "ref", pc.Source)
		return nil
	}
	return errors.New("no verified signature: this mcphost cannot verify registry signatures yet (see SECURITY.md); " +
		"set skip_signature = true on the plugin to run it unverified")
}

// readModule returns pc's module: its file, or its remote source through
// the plugin store.
func (h *Host) readModule(ctx context.Context, pc config.Plugin) ([]byte, *remoteModule, error) {
	if pc.Source == "" {
		wasm, err := os.ReadFile(pc.Path)
		if err != nil {
			return nil, nil, fmt.Errorf("load plugin %q: %w", pc.Name, err)
		}
		return wasm, nil, nil
	}
	rm, err := h.fetchRemote(ctx, pc)
	if err != nil {
		return nil, nil, err
	}
	if missing := ungranted(rm.grants, pc); len(missing) > 0 {
		h.logger.Warn("plugin asks for grants its config does not give; it runs without them",
			"plugin", pc.Name, "ref", pc.Source, "asked_not_granted", missing)
	}
	return rm.wasm, rm, nil
}

// ungranted lists what g asks for that pc does not grant.
func ungranted(g *registry.Grants, pc config.Plugin) []string {
	if g == nil {
		return nil
	}
	var out []string
	for _, host := range g.AllowedHosts {
		if !slices.Contains(pc.AllowedHosts, host) && !slices.Contains(pc.AllowedHosts, "*") {
			out = append(out, "network: "+host)
		}
	}
	guests := map[string]bool{}
	for _, guest := range pc.AllowedPaths {
		guests[guest] = true
	}
	for _, guest := range pc.WritablePaths {
		guests[guest] = true
	}
	for _, p := range g.AllowedPaths {
		if !guests[p] {
			out = append(out, "files: "+p)
		}
	}
	for _, e := range g.Env {
		if !slices.Contains(pc.Env, e) {
			out = append(out, "environment: "+e)
		}
	}
	if g.MemoryMB > pc.MemoryMB {
		out = append(out, fmt.Sprintf("memory: %d MiB (given %d)", g.MemoryMB, pc.MemoryMB))
	}
	sort.Strings(out)
	return out
}
