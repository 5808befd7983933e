package host

// The Skills extension (io.modelcontextprotocol/skills, SEP-2640): the
// Agent Skills plugins ship in their modules (abi/ABI.md §19, package
// skills), served as skill:// resources with skills/list, skills/get and
// resources/directory/read.
//
// A plugin's skills are read and checked when it loads (a bad one refuses
// the plugin, as any other load error: a reload keeps the generation that
// serves), and they belong to its generation: a new module is a new
// generation, and the catalog built from it serves its skills. Each skill
// of plugin P named N is served under skill://P/N/: its SKILL.md at
// skill://P/N/SKILL.md and every other file beside it. The plugin's name
// as the first segment keeps two plugins' skills apart and tells a client
// where a skill comes from. Every file is a resource of the catalog's
// server (so resources/read, resources/list, list_changed on a reload and
// the request path are those of every resource), answered by the host from
// the module's bytes: the plugin is never called for its skills.

import (
	"context"
	"encoding/base64"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host/internal/auth"
	"github.com/mcphost/mcphost/host/internal/config"
	"github.com/mcphost/mcphost/host/internal/skills"
)

// skillsExtension is the extension's identifier in capabilities.
const skillsExtension = "io.modelcontextprotocol/skills"

// skillsCapability is what the host declares of the extension: it serves
// resources/directory/read too.
var skillsCapability = map[string]any{"directoryRead": true}

// The methods of the extension.
const (
	methodSkillsList    = "skills/list"
	methodSkillsGet     = "skills/get"
	methodDirectoryRead = "resources/directory/read"
)

// mimeDirectory is the MIME type of a directory resource.
const mimeDirectory = "inode/directory"

// skillScheme starts the URI of every skill file.
const skillScheme = "skill://"

// moduleSkills reads and checks the skills a plugin's module ships (nil
// when it ships none).
func moduleSkills(wasm []byte) ([]*skills.Skill, error) {
	data, found, err := skills.Find(wasm)
	return parseSkills(data, found, err)
}

// fileSkills is moduleSkills for the module file of pc, read for its skills
// section only (a plugin served from its cached description).
func fileSkills(pc config.Plugin) ([]*skills.Skill, error) {
	data, found, err := skills.FindInFile(pc.Path)
	return parseSkills(data, found, err)
}

func parseSkills(data []byte, found bool, err error) ([]*skills.Skill, error) {
	if err != nil {
		return nil, fmt.Errorf("skills refused: %w", err)
	}
	if !found {
		return nil, nil
	}
	s, err := skills.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("skills refused (%s section): %w", skills.SectionName, err)
	}
	return s, nil
}

// skillEntry is a Skill of the extension: a skill's entry in skills/list
// and skills/get.
type skillEntry struct {
	URI         string          `json:"uri"`
	Frontmatter map[string]any  `json:"frontmatter"`
	Resources   []skillResource `json:"resources"`
}

// skillResource is one file of a skill entry.
type skillResource struct {
	URI    string `json:"uri"`
	Digest string `json:"digest"`
	Size   int    `json:"size"`
}

// skillRoot is the URI of the directory of lp's skill s.
func skillRoot(lp *loadedPlugin, s *skills.Skill) string {
	return skillScheme + lp.cfg.Name + "/" + s.Name
}

// entry returns s's entry as lp serves it.
func skillEntryOf(lp *loadedPlugin, s *skills.Skill) skillEntry {
	root := skillRoot(lp, s)
	e := skillEntry{URI: root + "/" + skills.ManifestName, Frontmatter: s.Frontmatter}
	for _, f := range s.Files {
		e.Resources = append(e.Resources, skillResource{URI: root + "/" + f.Path, Digest: f.Digest, Size: f.Size()})
	}
	return e
}

// skillIndex is what a catalog serves of skills, by URI. Built whole with
// the catalog and never changed.
type skillIndex struct {
	list  []*servedSkill          // sorted by URI: skills/list's order
	byURI map[string]*servedSkill // SKILL.md URI
	files map[string]*servedFile  // every file's URI
	dirs  map[string]*servedDir   // every directory's URI
}

type servedSkill struct {
	plugin *loadedPlugin
	entry  skillEntry
}

type servedFile struct {
	plugin   *loadedPlugin
	resource *mcp.Resource
	text     string
	digest   string
}

type servedDir struct {
	plugin   *loadedPlugin
	children []*mcp.Resource // sorted by URI
}

// buildSkillIndex indexes the skills of c's plugins, but those of a
// hostile generation and those held out by the lock file (held). A
// plugin's resource at the URI of a skill file is left out of c, with a
// warning: skill:// URIs of the form skill://PLUGIN/… are the host's.
func buildSkillIndex(c *catalog, held held, logger hclog.Logger) *skillIndex {
	x := &skillIndex{byURI: map[string]*servedSkill{}, files: map[string]*servedFile{}, dirs: map[string]*servedDir{}}
	for _, lp := range c.plugins {
		if lp.hostile || len(lp.skills) == 0 {
			continue
		}
		base := skillScheme + lp.cfg.Name
		top := &servedDir{plugin: lp}
		for _, s := range lp.skills {
			e := skillEntryOf(lp, s)
			if held[lp]["skill "+e.URI] {
				logger.Debug("skill held out until its change is accepted", "plugin", lp.cfg.Name, "skill", e.URI)
				continue
			}
			root := skillRoot(lp, s)
			top.children = append(top.children, &mcp.Resource{URI: root, Name: s.Name, MIMEType: mimeDirectory})
			x.dirs[root] = &servedDir{plugin: lp}
			for _, f := range s.Files {
				uri := root + "/" + f.Path
				r := &mcp.Resource{URI: uri, Name: path.Base(f.Path), MIMEType: f.MIMEType, Size: int64(f.Size()),
					Description: fmt.Sprintf("%s of the %s skill (plugin %s)", f.Path, s.Name, lp.cfg.Name)}
				if f.Path == skills.ManifestName {
					// SEP-2640: a SKILL.md resource is named and
					// described by its front matter.
					r.Name, r.Description = s.Name, s.Description
				}
				if owner := c.resources[uri].plugin; owner != nil {
					logger.Warn("resource at a skill's URI left out: the host serves the skill's file there",
						"plugin", owner.cfg.Name, "resource", uri, "skill_plugin", lp.cfg.Name)
					delete(c.resources, uri)
				}
				x.files[uri] = &servedFile{plugin: lp, resource: r, text: f.Text, digest: f.Digest}
				// Every directory from the file up to the skill's root.
				child := r
				for dir := parentURI(uri); ; dir = parentURI(dir) {
					d := x.dirs[dir]
					if d == nil {
						d = &servedDir{plugin: lp}
						x.dirs[dir] = d
					}
					if !slices.ContainsFunc(d.children, func(r *mcp.Resource) bool { return r.URI == child.URI }) {
						d.children = append(d.children, child)
					}
					if dir == root {
						break
					}
					child = &mcp.Resource{URI: dir, Name: dir[len(parentURI(dir))+1:], MIMEType: mimeDirectory}
				}
			}
			ss := &servedSkill{plugin: lp, entry: e}
			x.list = append(x.list, ss)
			x.byURI[e.URI] = ss
		}
		if len(top.children) > 0 {
			x.dirs[base] = top
		}
	}
	for _, d := range x.dirs {
		slices.SortFunc(d.children, func(a, b *mcp.Resource) int { return strings.Compare(a.URI, b.URI) })
	}
	slices.SortFunc(x.list, func(a, b *servedSkill) int { return strings.Compare(a.entry.URI, b.entry.URI) })
	return x
}

// parentURI is the directory of a skill file or directory: uri up to its
// last '/' (path.Dir would fold the scheme's "//").
func parentURI(uri string) string { return uri[:strings.LastIndexByte(uri, '/')] }

// view returns the part of x whose plugins keep says (a profile's).
func (x *skillIndex) view(keep func(*loadedPlugin) bool) *skillIndex {
	if x == nil {
		return nil
	}
	v := &skillIndex{byURI: map[string]*servedSkill{}, files: map[string]*servedFile{}, dirs: map[string]*servedDir{}}
	for _, s := range x.list {
		if keep(s.plugin) {
			v.list = append(v.list, s)
			v.byURI[s.entry.URI] = s
		}
	}
	for uri, f := range x.files {
		if keep(f.plugin) {
			v.files[uri] = f
		}
	}
	for uri, d := range x.dirs {
		if keep(d.plugin) {
			v.dirs[uri] = d
		}
	}
	return v
}

// file returns the skill file served at uri (nil for none).
func (x *skillIndex) file(uri string) *servedFile {
	if x == nil || !strings.HasPrefix(uri, skillScheme) {
		return nil
	}
	return x.files[uri]
}

// of returns the SKILL.md URIs of lp's skills served, sorted.
func (x *skillIndex) of(lp *loadedPlugin) []string {
	if x == nil {
		return nil
	}
	var uris []string
	for _, s := range x.list {
		if s.plugin == lp {
			uris = append(uris, s.entry.URI)
		}
	}
	return uris
}

// applyTo brings server's skill files from old's (nil at start) to x's, as
// catalog.applyTo does for the plugins' items, after them: a URI that left
// the skills for a plugin's resource is not removed again.
func (x *skillIndex) applyTo(server *mcp.Server, old *skillIndex, c *catalog, h *Host) {
	var before, now map[string]*servedFile
	if old != nil {
		before = old.files
	}
	if x != nil {
		now = x.files
	}
	remove := func(uris ...string) {
		uris = slices.DeleteFunc(uris, func(uri string) bool { _, ok := c.resources[uri]; return ok })
		if len(uris) > 0 {
			server.RemoveResources(uris...)
		}
	}
	syncKind(before, now, remove, func(uri string, o **servedFile, f *servedFile) {
		if o == nil || (*o).digest != f.digest || !sameJSON((*o).resource, f.resource) {
			h.register(f.plugin, "skill file", uri, func() { server.AddResource(f.resource, f.read) })
		}
	})
}

// read answers resources/read of the file.
func (f *servedFile) read(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: f.resource.URI, MIMEType: f.resource.MIMEType, Text: f.text}}}, nil
}

// skillParams are the params of the extension's methods.
type skillParams struct {
	mcp.ParamsBase
	URI    string `json:"uri,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// listSkillsResult is ListSkillsResult.
type listSkillsResult struct {
	mcp.ResultBase
	ResultType string       `json:"resultType"`
	Skills     []skillEntry `json:"skills"`
	NextCursor string       `json:"nextCursor,omitempty"`
	TTLMs      int64        `json:"ttlMs"`
	CacheScope string       `json:"cacheScope"`
}

// getSkillResult is GetSkillResult.
type getSkillResult struct {
	mcp.ResultBase
	ResultType string     `json:"resultType"`
	Skill      skillEntry `json:"skill"`
	TTLMs      int64      `json:"ttlMs"`
	CacheScope string     `json:"cacheScope"`
}

// directoryResult is ReadResourceDirectoryResult.
type directoryResult struct {
	mcp.ResultBase
	ResultType string          `json:"resultType"`
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
}

// cacheScope is the cacheScope (SEP-2549) of the host's cacheable results:
// "private" when [server.auth] filters them by the token's scopes (a cache
// shared between users could otherwise hand one user's list to another
// whose token reaches less), "public" otherwise.
func (h *Host) cacheScope() string {
	if h.auth != nil {
		return "private"
	}
	return "public"
}

// registerSkillMethods makes go-sdk accept the extension's methods; the
// host's skillMethods middleware answers them.
func registerSkillMethods(s *mcp.Server) error {
	for _, m := range []string{methodSkillsList, methodSkillsGet, methodDirectoryRead} {
		err := mcp.AddReceivingCustomMethod(s, m, func(context.Context, *mcp.ServerSession, *skillParams) (*directoryResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: m + ": not served (the host's skills middleware is missing)"}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// skillMethods is a receiving middleware, the last of the request path
// (middleware.go): it serves skills/list, skills/get and
// resources/directory/read from the catalog of p (nil: /mcp's), leaving
// out, with [server.auth], the skills of plugins the token's scopes do not
// reach.
func (h *Host) skillMethods(p *profile) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case methodSkillsList, methodSkillsGet, methodDirectoryRead:
			default:
				return next(ctx, method, req)
			}
			var params skillParams
			if r, ok := req.(*mcp.ServerRequest[*skillParams]); ok && r.Params != nil {
				params = *r.Params
			}
			x := &skillIndex{}
			if c := h.currentCatalog(p); c != nil && c.skills != nil {
				x = c.skills
			}
			reaches := func(lp *loadedPlugin) bool {
				return h.auth == nil || auth.HasScopes(tokenInfo(req), pluginScopes(lp, ""))
			}
			ttl := h.settings.ListTTL.Milliseconds()
			switch method {
			case methodSkillsList:
				var all []skillEntry
				for _, s := range x.list {
					if reaches(s.plugin) {
						all = append(all, s.entry)
					}
				}
				page, next, err := pageOf(all, h.settings.PageSize, params.Cursor, func(e skillEntry) string { return e.URI })
				if err != nil {
					return nil, err
				}
				if page == nil {
					page = []skillEntry{}
				}
				return &listSkillsResult{ResultType: "complete", Skills: page, NextCursor: next, TTLMs: ttl, CacheScope: h.cacheScope()}, nil
			case methodSkillsGet:
				s := x.byURI[params.URI]
				if s == nil {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no skill is served at %q", params.URI)}
				}
				if !reaches(s.plugin) {
					return nil, scopeError("skill", params.URI, pluginScopes(s.plugin, ""))
				}
				return &getSkillResult{ResultType: "complete", Skill: s.entry, TTLMs: ttl, CacheScope: h.cacheScope()}, nil
			default: // resources/directory/read
				d := x.dirs[params.URI]
				if d == nil {
					if x.file(params.URI) != nil {
						return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%q is not a directory resource", params.URI)}
					}
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no directory resource is served at %q", params.URI)}
				}
				if !reaches(d.plugin) {
					return nil, scopeError("directory", params.URI, pluginScopes(d.plugin, ""))
				}
				page, next, err := pageOf(d.children, h.settings.PageSize, params.Cursor, func(r *mcp.Resource) string { return r.URI })
				if err != nil {
					return nil, err
				}
				if page == nil {
					page = []*mcp.Resource{}
				}
				return &directoryResult{ResultType: "complete", Resources: page, NextCursor: next}, nil
			}
		}
	}
}

// pageOf returns the page of items (sorted by key) that cursor starts,
// size long ([server] page_size), and the cursor of the next one ("" at
// the end). A cursor is the key of the last item of the page before,
// encoded: a page stays right when items come and go between two calls.
func pageOf[T any](items []T, size int, cursor string, key func(T) string) ([]T, string, error) {
	start := 0
	if cursor != "" {
		after, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil {
			return nil, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid cursor %q", cursor)}
		}
		start, _ = slices.BinarySearchFunc(items, string(after), func(it T, k string) int { return strings.Compare(key(it), k) })
		if start < len(items) && key(items[start]) == string(after) {
			start++
		}
	}
	size = max(size, 1)
	end := min(start+size, len(items))
	page := items[start:end]
	if end < len(items) {
		return page, base64.RawURLEncoding.EncodeToString([]byte(key(items[end-1]))), nil
	}
	return page, "", nil
}

// PackSkills reads a plugin's skills directory (one subdirectory per
// skill, each with a SKILL.md) and returns the content of its
// mcphost.skills section, checked as a host checks it at load: the same
// files give the same bytes. `mcphost plugin build` and `mcphost plugin
// skills` call it.
func PackSkills(dir string) ([]byte, error) { return skills.Pack(dir) }

// EmbedSkills returns wasm with packed (a PackSkills result) as its
// skills section, replacing one it had; nil packed removes it.
func EmbedSkills(wasm, packed []byte) ([]byte, error) { return skills.Embed(wasm, packed) }
