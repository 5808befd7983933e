package host

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/mcphost/mcphost/host/internal/config"
	"github.com/mcphost/mcphost/host/internal/listcache"
	"github.com/mcphost/mcphost/host/internal/plugin"
	"github.com/mcphost/mcphost/host/internal/shipped"
)

// The description cache (package listcache) lets a host whose plugins are
// unchanged serve their lists at start without reading, compiling or
// instantiating any: a plugin found in it is made with
// plugin.FromDescription, and its module is read, checked against the
// digest the entry names and compiled at its first call. What the entry
// holds is the raw output of the plugin's list calls, which is put through
// the bridge's checks again (replayer), as a live plugin's would be; the
// lock file and scopes see the result like any other. A plugin not in the
// cache is loaded as before, and its entry is written once it has passed.
// RATIONALE.md says why.

// openDescriptions opens the description cache beside the compilation
// cache, or returns nil when there is none.
func (h *Host) openDescriptions(cacheDir string) *listcache.Cache {
	if cacheDir == "" {
		return nil
	}
	c, err := listcache.Open(filepath.Join(cacheDir, "lists"), h.logger.Named("listcache"))
	if err != nil {
		h.logger.Warn("description cache unusable; loading every plugin at start", "error", err)
		return nil
	}
	return c
}

// describing is one plugin's load as the description cache sees it.
type describing struct {
	h     *Host
	pc    config.Plugin
	env   map[string]string // pluginEnv's
	key   string            // "" when the plugin is not cached
	entry *listcache.Entry  // nil: none usable
	file  listcache.FileKey // the file's before it was read (local files)
	// live is set when the plugin must be listed from its module (a
	// reload it asked for, validate, plugin test); volatile when its
	// lists were found to change with the same module.
	live, volatile bool
}

// describing looks pc up in the description cache. A plugin is cached when
// the cache is on, it is loaded the ordinary way (mcphost flavor, checked
// when written), and it has no min_instances and an idle_timeout (either
// asks for it to be warm from the start). live skips the lookup: the plugin is loaded from its file and
// its entry written again.
func (h *Host) describing(pc config.Plugin, live bool) *describing {
	d := &describing{h: h, pc: pc, env: h.pluginEnv(pc), live: live || h.loadEveryPlugin}
	if h.descriptions == nil || keptWarm(pc) {
		return d
	}
	settings, err := json.Marshal(struct {
		Plugin config.Plugin
		Env    map[string]string
	}{pc, d.env})
	if err != nil {
		h.logger.Warn("plugin settings cannot be keyed; not caching its description", "plugin", pc.Name, "error", err)
		return d
	}
	d.key = h.descriptions.Key(settings)
	if pc.Source == "" {
		if fk, err := listcache.StatFile(pc.Path); err == nil {
			d.file = fk
		}
	}
	e := h.descriptions.Get(d.key, pc.Name)
	switch {
	case e != nil && e.Volatile:
		h.logger.Debug("plugin lists otherwise than its description at times; loading it", "plugin", pc.Name)
		d.key = "" // and the mark stays
		d.volatile = true
	case !live:
		d.entry = e
	}
	return d
}

// fromFileKey makes the plugin from its entry when its file is, as far as
// the system says, the one the entry was written for; nil otherwise. The
// digest is verified at the first activation.
func (d *describing) fromFileKey(ctx context.Context) *loadedPlugin {
	e := d.entry
	if e == nil || d.pc.Source != "" || e.File == (listcache.FileKey{}) || e.File != d.file {
		return nil
	}
	if d.pc.SHA256 != "" && d.pc.SHA256 != e.Digest {
		return nil // loaded, and refused, as always
	}
	var hash [sha256.Size]byte
	if n, err := hex.Decode(hash[:], []byte(e.Digest)); err != nil || n != len(hash) {
		d.h.logger.Warn("cached description names no valid digest; loading the plugin", "plugin", d.pc.Name)
		return nil
	}
	return d.make(ctx, e, hash, nil, false)
}

// fromDigest makes the plugin from its entry when the module read has the
// digest the entry names; nil otherwise. A local file touched since the
// entry was written has its new file key recorded.
func (d *describing) fromDigest(ctx context.Context, hash [sha256.Size]byte, remote *remoteModule) *loadedPlugin {
	e := d.entry
	if e == nil || e.Digest != hex.EncodeToString(hash[:]) {
		return nil
	}
	lp := d.make(ctx, e, hash, remote, false)
	if lp != nil && d.pc.Source == "" && e.File != d.file && d.stillUnchanged() {
		updated := *e
		updated.File = d.file
		if err := d.h.descriptions.Put(&updated); err != nil {
			d.h.logger.Debug("cannot update the cached description", "plugin", d.pc.Name, "error", err)
		}
	}
	return lp
}

// stillUnchanged reports whether the local file's key is still the one
// taken before it was read.
func (d *describing) stillUnchanged() bool {
	fk, err := listcache.StatFile(d.pc.Path)
	return err == nil && fk == d.file && fk != (listcache.FileKey{})
}

// make builds the plugin's generation from e (an entry of the cache, or
// made of the description the module ships) and lists it through the
// bridge's checks; nil (logged) when that fails, for the caller to load
// the plugin instead.
func (d *describing) make(ctx context.Context, e *listcache.Entry, hash [sha256.Size]byte, remote *remoteModule, fromModule bool) *loadedPlugin {
	h, pc := d.h, d.pc
	digest := e.Digest
	fetch := func(ctx context.Context) ([]byte, error) {
		wasm, _, err := h.readModule(ctx, pc)
		if err != nil {
			return nil, err
		}
		if sum := sha256Sum(wasm); hex.EncodeToString(sum[:]) != digest {
			where := pc.Origin()
			stale, of := plugin.ErrStaleDescription, "its cached description was of"
			if fromModule {
				stale, of = errShippedStale, "the description was read from the module of sha256"
			}
			return nil, fmt.Errorf("%w: plugin %q: %s has sha256 %s, %s %s; reloading it",
				stale, pc.Name, where, hex.EncodeToString(sum[:]), of, digest)
		}
		return wasm, nil
	}
	key := d.key
	what := "cached description"
	hooks := plugin.DescribedHooks{OnStale: func(err error) { h.staleDescription(pc.Name, key, err) }}
	if fromModule {
		what = "description the module ships"
		hooks = plugin.DescribedHooks{
			OnStale:    func(err error) { h.staleShipped(pc.Name, err) },
			OnVerified: func() { d.verifiedShipped(e) },
			Stale:      errShippedStale,
			// Most likely never compiled here: its first activation runs
			// interpreted while it compiles.
			InterpretFirst: true,
		}
	}
	p, err := plugin.FromDescription(h.pluginOptions(pc, d.env), e.Description, fetch, hooks)
	if err != nil {
		h.logger.Warn(what+" unusable; loading the plugin", "plugin", pc.Name, "error", err)
		return nil
	}
	lp := newLoadedPlugin(pc, hash, p)
	lp.remote = remote
	lp.unverified = fromModule
	if err := lp.listFrom(ctx, h.logger, &replayer{Plugin: p, calls: e.Description.Lists}); err != nil {
		_ = p.Close(context.WithoutCancel(ctx))
		h.logger.Warn(what+" unusable; loading the plugin", "plugin", pc.Name, "error", err)
		return nil
	}
	h.logger.Debug("plugin described from its "+what+"; it activates on its first call", "plugin", pc.Name)
	return lp
}

// keptWarm reports whether the plugin asks to be active from the start
// (min_instances, or idle_timeout = "0"): it is loaded from its module,
// never served from a description.
func keptWarm(pc config.Plugin) bool {
	return pc.MinInstances > 0 || pc.IdleTimeout == 0
}

// errShippedStale is the error of a call to a plugin whose module, at its
// first activation, does not match the description it ships.
var errShippedStale = plugin.StaleDescription{Text: "the plugin does not match the description its module ships"}

// fromModule makes the plugin from the description its module ships
// (package shipped), for a plugin with no usable cached one; nil when the
// module ships none or it cannot be used (logged), for the caller to load
// the plugin from its module. A plugin that must be listed live, that has
// min_instances, or whose lists were found to change is loaded instead.
func (d *describing) fromModule(ctx context.Context, wasm []byte, hash [sha256.Size]byte, remote *remoteModule) *loadedPlugin {
	if d.live || d.volatile || keptWarm(d.pc) {
		return nil
	}
	if configured(d.pc, d.env) {
		// What it lists may depend on its config or environment, which
		// the description was not made with: listing it from the
		// description could show a client stale lists until the check.
		d.h.logger.Debug("plugin has config or env: not listed from the description its module ships", "plugin", d.pc.Name)
		return nil
	}
	data, found, err := shipped.Find(wasm)
	if err != nil || !found {
		return nil // a module that cannot be split fails its load, with the reason
	}
	desc, err := shipped.Decode(data)
	if err != nil {
		d.h.logger.Warn("the description the module ships is unusable; loading the plugin", "plugin", d.pc.Name, "error", err)
		return nil
	}
	if desc.Flavor != plugin.FlavorMCPHost {
		d.h.logger.Warn("the description the module ships is not of an mcphost plugin; loading the plugin", "plugin", d.pc.Name, "flavor", desc.Flavor)
		return nil
	}
	return d.make(ctx, &listcache.Entry{Key: d.key, Digest: hex.EncodeToString(hash[:]), Description: desc}, hash, remote, true)
}

// verifiedShipped records, once the first activation found the module and
// its lists to be the ones its shipped description gives, that description
// in the cache as if the plugin had been listed live with these settings
// (it has): the next start finds it there without reading the module.
func (d *describing) verifiedShipped(e *listcache.Entry) {
	if d.key == "" || d.h.descriptions == nil {
		return
	}
	entry := *e
	if d.pc.Source == "" && d.stillUnchanged() {
		entry.File = d.file
	}
	if err := d.h.descriptions.Put(&entry); err != nil {
		d.h.logger.Debug("cannot cache the plugin's description", "plugin", d.pc.Name, "error", err)
	}
}

// staleShipped handles a plugin whose first activation found that its
// module, or its lists with these settings, are not what the description
// the module ships says (a description made with other config, or one
// that lies): it is reloaded from its module, as for a stale cached
// description, and listed live; that load caches what it lists.
func (h *Host) staleShipped(name string, err error) {
	h.logger.Warn("plugin does not list what its module's description says; refusing its calls and reloading it", "plugin", name, "error", err)
	h.listChanged(context.Background(), name, "tools")
}

// shippableCalls returns calls with each input's context id (a random
// number that tells calls apart in logs) set to 0, so that describing the
// same module twice writes the same bytes (a reproducible build stays
// reproducible). The first activation replays these inputs.
func shippableCalls(calls []plugin.ListCall) []plugin.ListCall {
	out := make([]plugin.ListCall, len(calls))
	for i, c := range calls {
		out[i] = c
		var in map[string]any
		if json.Unmarshal(c.Input, &in) != nil {
			continue
		}
		ctx, ok := in["context"].(map[string]any)
		if !ok {
			continue
		}
		if _, ok := ctx["id"]; !ok {
			continue
		}
		ctx["id"] = 0
		if b, err := json.Marshal(in); err == nil {
			out[i].Input = b
		}
	}
	return out
}

// configured reports whether the plugin is given config values or
// environment variables: a description shipped in its module (made
// without them) is then not used.
func configured(pc config.Plugin, env map[string]string) bool {
	return len(pc.Config) > 0 || len(env) > 0
}

// notUsedConfigured is added to the status of a shipped description of a
// plugin that has config or env.
const notUsedConfigured = "; not used with this config: the plugin has config or env, on which its lists may depend, so a host loads it from its module"

// shippedStatus says how the description the module ships compares with
// the plugin's lists just read live, for validate, inspect and plugin
// test: "" when the module ships none.
func shippedStatus(wasm []byte, live plugin.Description) string {
	data, found, err := shipped.Find(wasm)
	switch {
	case err != nil:
		return "unreadable: " + err.Error()
	case !found:
		return ""
	}
	desc, err := shipped.Decode(data)
	if err != nil {
		return "unusable: " + err.Error()
	}
	if err := desc.Matches(live); err != nil {
		return "differs from its lists with this config (" + err.Error() + "): a host without a cached description serves it until the plugin's first activation (in the background, or for a call, which is then refused), then reloads the plugin from its module"
	}
	return "matches its lists"
}

// write records the description of a plugin just loaded (and listed
// through calls) in the cache.
func (d *describing) write(hash [sha256.Size]byte, p *plugin.Plugin, calls []plugin.ListCall) {
	if d.key == "" || p.Flavor() != plugin.FlavorMCPHost {
		return
	}
	e := &listcache.Entry{Key: d.key, Digest: hex.EncodeToString(hash[:]), Description: p.Describe()}
	e.Description.Lists = calls
	if d.pc.Source == "" && d.stillUnchanged() {
		e.File = d.file
	}
	if err := d.h.descriptions.Put(e); err != nil {
		d.h.logger.Warn("cannot cache the plugin's description; it is loaded at every start", "plugin", d.pc.Name, "error", err)
	}
}

// staleDescription handles a plugin whose first activation found its
// module no longer the one described: its entry is dropped and it is
// reloaded (as if it had announced a list change), so that the next
// generation is loaded from its file. It must not block (it runs in the
// plugin's activation).
//
// A module that is the one described but lists otherwise has lists that
// depend on something outside the key: its entry is replaced by a mark
// (Volatile) so that it is loaded at every start rather than refused at
// every first call.
func (h *Host) staleDescription(name, key string, err error) {
	h.logger.Warn("plugin changed since its description was cached; refusing its calls and reloading it", "plugin", name, "error", err)
	if errors.Is(err, plugin.ErrListsDiffer) {
		if perr := h.descriptions.Put(&listcache.Entry{Key: key, Volatile: true}); perr != nil {
			h.logger.Warn("cannot mark the plugin's cached description", "plugin", name, "error", perr)
		}
	} else if rerr := h.descriptions.Remove(key); rerr != nil {
		h.logger.Warn("cannot drop the stale cached description", "plugin", name, "error", rerr)
	}
	h.listChanged(context.Background(), name, "tools")
}

// recorder is a plugin whose list calls are recorded, for its description.
type recorder struct {
	*plugin.Plugin
	calls []plugin.ListCall
}

// Call implements bridge.Caller, recording what the call returned.
func (r *recorder) Call(ctx context.Context, export string, input []byte) ([]byte, error) {
	out, err := r.Plugin.Call(ctx, export, input)
	if err == nil {
		r.calls = append(r.calls, plugin.ListCall{Export: export, Input: bytes.Clone(input), Output: bytes.Clone(out)})
	}
	return out, err
}

// replayer answers list calls from a description's records, without the
// plugin: each export's calls in the order recorded. The input is not
// compared: the bridge's carries a fresh request id every time, and a
// list call has no other.
type replayer struct {
	*plugin.Plugin
	calls []plugin.ListCall
	used  []bool
}

// Call implements bridge.Caller: the next recorded output of export, or an
// error when there is none (the description is not of this host's
// listing).
func (r *replayer) Call(_ context.Context, export string, _ []byte) ([]byte, error) {
	if r.used == nil {
		r.used = make([]bool, len(r.calls))
	}
	for i, c := range r.calls {
		if c.Export == export && !r.used[i] {
			r.used[i] = true
			return c.Output, nil
		}
	}
	return nil, fmt.Errorf("the cached description has no answer to %s", export)
}
