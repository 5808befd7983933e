package host

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/hashicorp/go-hclog"

	"github.com/mcphost/mcphost/host/internal/config"
	"github.com/mcphost/mcphost/host/internal/registry"
	"github.com/mcphost/mcphost/internal/regularfile"
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
	// digest is the manifest's digest (oci) or the file's (https).
	digest string
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
		if !pc.SkipSignature {
			return fail(errors.New("an https:// plugin carries no signature mcphost can check; pin it with sha256 and set skip_signature = true, or publish it to a registry and sign it"))
		}
		h.warnUnsigned(pc)
		return &remoteModule{wasm: b, digest: registry.Digest(b)}, nil
	}
	digest := ref.Digest
	var pin *sourcePin
	if digest == "" && h.settings.LockFile == "" {
		return fail(errors.New("a tag is pinned in the lock file, which is off ([server] lock_file = \"off\"): name the plugin by digest (oci://…@sha256:…) or turn the lock file on"))
	}
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
	pulled := false
	if err != nil {
		if !errors.Is(err, registry.ErrNotStored) {
			h.logger.Warn("plugin store entry unusable; fetching it again", "plugin", pc.Name, "ref", pc.Source, "error", err)
		}
		if mod, err = client.Pull(ctx, ref, digest, pc.Insecure); err != nil {
			return fail(fmt.Errorf("%w (not in the plugin store %s either)", err, client.Store.Dir))
		}
		pulled = true
	}
	if err := h.checkSignature(pc, mod); err != nil && !pulled {
		// Signatures may have been attached since it was stored: ask the
		// registry once more.
		if again, perr := client.Pull(ctx, ref, digest, pc.Insecure); perr == nil {
			mod = again
		}
	}
	if err := h.checkSignature(pc, mod); err != nil {
		return fail(fmt.Errorf("%s: %w", digest, err))
	}
	return &remoteModule{wasm: mod.Wasm, digest: digest, pin: pin, grants: mod.Grants}, nil
}

// checkSignature refuses a plugin from a registry without a signature by
// one of its trusted keys, unless its config opts out (which is logged at
// warn on every load).
func (h *Host) checkSignature(pc config.Plugin, mod *registry.Module) error {
	if pc.SkipSignature {
		h.warnUnsigned(pc)
		return nil
	}
	keyless := pc.TrustedRoot != ""
	if len(pc.TrustedKeys) == 0 && !keyless {
		return errors.New("no trusted_keys or keyless signer (trusted_root, signer_subject, signer_issuer) to verify its signature with; set them in [server] or on the plugin, or skip_signature = true to run it unverified")
	}
	var problems []error
	if len(pc.TrustedKeys) > 0 {
		var keys []crypto.PublicKey
		for _, f := range pc.TrustedKeys {
			k, err := registry.LoadPublicKey(f)
			if err != nil {
				return err
			}
			keys = append(keys, k)
		}
		err := registry.Verify(mod.Digest, mod.Signatures, keys)
		if err == nil {
			return nil
		}
		problems = append(problems, err)
	}
	if keyless {
		err := registry.VerifyKeyless(mod.Digest, mod.Signatures, pc.TrustedRoot, registry.Identity{Subject: pc.SignerSubject, Issuer: pc.SignerIssuer})
		if err == nil {
			return nil
		}
		if !errors.Is(err, registry.ErrUnsigned) || len(problems) == 0 {
			problems = append(problems, err)
		}
	}
	return fmt.Errorf("signature not verified: %w", errors.Join(problems...))
}

func (h *Host) warnUnsigned(pc config.Plugin) {
	h.logger.Warn("plugin signature NOT verified (skip_signature = true): anyone who can write to its source can change what runs",
		"plugin", pc.Name, "ref", pc.Source)
}

// readModule returns pc's module: its file, or its remote source through
// the plugin store.
func (h *Host) readModule(ctx context.Context, pc config.Plugin) ([]byte, *remoteModule, error) {
	if pc.Source == "" {
		wasm, err := regularfile.ReadFile(pc.Path)
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
		out = append(out, fmt.Sprintf("memory: %d MiB", g.MemoryMB))
	}
	sort.Strings(out)
	return out
}

// remoteInfo adds to info where lp came from and what it asks for.
func remoteInfo(info *PluginInfo, lp *loadedPlugin) {
	if lp.remote == nil {
		return
	}
	info.Source, info.Digest = lp.cfg.Source, lp.remote.digest
	if info.Path == "" {
		info.Path = lp.cfg.Source
	}
	info.Asked = asked(lp.remote.grants)
	info.AskedNotGranted = ungranted(lp.remote.grants, lp.cfg)
}

// asked lists the grants g asks for, worded as ungranted words them.
func asked(g *registry.Grants) []string {
	if g == nil {
		return nil
	}
	var out []string
	for _, h := range g.AllowedHosts {
		out = append(out, "network: "+h)
	}
	for _, p := range g.AllowedPaths {
		out = append(out, "files: "+p)
	}
	for _, e := range g.Env {
		out = append(out, "environment: "+e)
	}
	if g.MemoryMB > 0 {
		out = append(out, fmt.Sprintf("memory: %d MiB", g.MemoryMB))
	}
	return out
}

// SourceUpdate is what UpdateSources did for one plugin.
type SourceUpdate struct {
	// Plugin is the plugin's name, Ref its configured reference.
	Plugin, Ref string
	// Old and New are the digests pinned before and after.
	Old, New string
}

// UpdateSources resolves again the tags of the named plugins fetched from
// registries (all of them when none is named), fetches and verifies what
// they name now, and pins the new digests in the lock file. A plugin whose
// new digest cannot be fetched or verified keeps its old pin, and the
// error says why. A running host watching the lock file reloads and serves
// what was updated.
func UpdateSources(ctx context.Context, cfg *Config, names []string, logger hclog.Logger) ([]SourceUpdate, error) {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	path := cfg.Server.LockFile
	if path == "" {
		return nil, errors.New("update: the lock file is off ([server] lock_file = \"off\"), so nothing is pinned")
	}
	client, err := registryClient(cfg.Server)
	if err != nil {
		return nil, err
	}
	byName := map[string]config.Plugin{}
	for _, pc := range cfg.Plugins {
		byName[pc.Name] = pc
	}
	if len(names) == 0 {
		for _, pc := range cfg.Plugins {
			names = append(names, pc.Name)
		}
	}
	h := &Host{logger: logger, settings: cfg.Server}
	var updates []SourceUpdate
	var problems []error
	pins := map[string]sourcePin{}
	for _, name := range names {
		pc, ok := byName[name]
		if !ok {
			problems = append(problems, fmt.Errorf("update: no plugin %q in %s", name, cfg.Path))
			continue
		}
		ref, err := registry.ParseRef(pc.Source)
		if err != nil || ref.Scheme != registry.SchemeOCI || ref.Tag == "" {
			continue // a local file, a URL or a digest: nothing to resolve
		}
		old, _ := pinnedDigest(path, pc)
		digest, err := client.Resolve(ctx, ref, pc.Insecure)
		if err != nil {
			problems = append(problems, fmt.Errorf("update plugin %q from %s: %w (the pinned %s stays)", name, pc.Source, err, old))
			continue
		}
		// Pulled again even when stored, for signatures attached since.
		mod, err := client.Pull(ctx, ref, digest, pc.Insecure)
		if err != nil {
			problems = append(problems, fmt.Errorf("update plugin %q from %s: %w (the pinned %s stays)", name, pc.Source, err, old))
			continue
		}
		if err := h.checkSignature(pc, mod); err != nil {
			problems = append(problems, fmt.Errorf("update plugin %q from %s: the tag now names %s: %w (the pinned %s stays)", name, pc.Source, digest, err, old))
			continue
		}
		pins[name] = sourcePin{Ref: pc.Source, Digest: digest}
		updates = append(updates, SourceUpdate{Plugin: name, Ref: pc.Source, Old: old, New: digest})
	}
	if len(pins) > 0 {
		lock, err := readLock(path)
		if err != nil {
			return nil, fmt.Errorf("update: %w", err)
		}
		if lock.Sources == nil {
			lock.Sources = map[string]sourcePin{}
		}
		changed := false
		for name, pin := range pins {
			if lock.Sources[name] != pin {
				lock.Sources[name] = pin
				changed = true
			}
		}
		if changed {
			if err := lock.write(path); err != nil {
				return nil, err
			}
		}
	}
	return updates, errors.Join(problems...)
}

// RequestedGrants are the grants a plugin's artifact asks for (abi/ABI.md,
// "Requested grants").
type RequestedGrants = registry.Grants

// PushPlugin publishes wasm to ref (oci://REGISTRY/REPO:TAG) as a Wasm OCI
// artifact that asks for grants (nil: says nothing), with the registry
// credentials of the Docker config; insecure speaks plain HTTP to a
// registry on loopback. It returns the manifest's digest.
func PushPlugin(ctx context.Context, wasm []byte, ref string, grants *RequestedGrants, insecure bool) (string, error) {
	r, err := registry.ParseRef(ref)
	if err != nil {
		return "", err
	}
	if r.Scheme != registry.SchemeOCI {
		return "", fmt.Errorf("push: %s is not an oci:// reference", ref)
	}
	if insecure && !r.Loopback() {
		return "", fmt.Errorf("push: plain HTTP is only allowed to a registry on loopback; %q is not", r.Registry)
	}
	return (&registry.Client{}).Push(ctx, r, wasm, grants, insecure)
}

// PulledPlugin is a plugin fetched into the plugin store.
type PulledPlugin struct {
	// Ref is the reference pulled, Digest what it resolved to.
	Ref, Digest string
	// Store is the plugin store's directory.
	Store string
	// Wasm is the plugin's module.
	Wasm []byte
	// Grants are what its artifact asks for (nil: it says nothing).
	Grants *RequestedGrants
}

// PullPlugin fetches the plugin ref names (oci:// or, with sha256Hex,
// https://) into the plugin store that the [server] settings s name.
func PullPlugin(ctx context.Context, s config.Server, ref, sha256Hex string, insecure bool) (*PulledPlugin, error) {
	r, err := registry.ParseRef(ref)
	if err != nil {
		return nil, err
	}
	if insecure && !r.Loopback() {
		return nil, fmt.Errorf("pull: plain HTTP is only allowed to a registry on loopback; %q is not", r.Registry)
	}
	client, err := registryClient(s)
	if err != nil {
		return nil, err
	}
	out := &PulledPlugin{Ref: ref, Store: client.Store.Dir}
	if r.Scheme == registry.SchemeHTTPS {
		if sha256Hex == "" {
			return nil, fmt.Errorf("pull %s: an https:// plugin needs its sha256 (--sha256)", ref)
		}
		b, err := client.FetchURL(ctx, r, sha256Hex)
		if err != nil {
			return nil, err
		}
		out.Wasm, out.Digest = b, registry.Digest(b)
		return out, nil
	}
	digest, err := client.Resolve(ctx, r, insecure)
	if err != nil {
		return nil, err
	}
	mod, err := client.Open(digest)
	if err != nil {
		if mod, err = client.Pull(ctx, r, digest, insecure); err != nil {
			return nil, err
		}
	}
	out.Digest, out.Wasm, out.Grants = digest, mod.Wasm, mod.Grants
	return out, nil
}

// SignPlugin signs the manifest ref names with the ECDSA P-256 private key
// in keyFile (unencrypted PEM) and attaches the Sigstore bundle to it in
// the registry; with certFile (PEM), the bundle carries that certificate
// of the key (keyless verification against a trusted root). It returns
// the manifest's digest.
func SignPlugin(ctx context.Context, ref, keyFile, certFile string, insecure bool) (string, error) {
	r, err := registry.ParseRef(ref)
	if err != nil {
		return "", err
	}
	if r.Scheme != registry.SchemeOCI {
		return "", fmt.Errorf("sign: %s is not an oci:// reference", ref)
	}
	if insecure && !r.Loopback() {
		return "", fmt.Errorf("sign: plain HTTP is only allowed to a registry on loopback; %q is not", r.Registry)
	}
	key, err := registry.LoadPrivateKey(keyFile)
	if err != nil {
		return "", err
	}
	var cert []byte
	if certFile != "" {
		if cert, err = registry.LoadCertificate(certFile); err != nil {
			return "", err
		}
	}
	return (&registry.Client{}).Sign(ctx, r, key, cert, insecure)
}
