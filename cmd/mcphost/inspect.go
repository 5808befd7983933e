package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tetratelabs/wazero"

	"github.com/mcphost/mcphost/host"
)

// inspection is what `mcphost plugin inspect` reports about a .wasm file.
type inspection struct {
	File    string   `json:"file"`
	Size    int64    `json:"size"`
	SHA256  string   `json:"sha256"`
	Exports []string `json:"exports"`
	Imports []string `json:"imports"` // "module.name"
	// Loads says whether the host loads the module with no grants; Error
	// says why not.
	Loads      bool     `json:"loads"`
	Error      string   `json:"error,omitempty"`
	Flavor     string   `json:"flavor,omitempty"`
	ABIVersion int      `json:"abiVersion,omitempty"`
	Tools      []string `json:"tools"`
	// Tasks are the tools that may run as tasks (ABI.md §15), with their
	// task support.
	Tasks     []string `json:"tasks,omitempty"`
	Resources []string `json:"resources"`
	Templates []string `json:"resourceTemplates"`
	Prompts   []string `json:"prompts"`
	// Apps are its MCP Apps (ui:// resources), what each shows and asks
	// to reach; a source outside the grants it is inspected with (none)
	// is also in Needs, with the grant it needs.
	Apps []appReport `json:"apps,omitempty"`
	// Skills are the URIs of the SKILL.md of each Agent Skill the module
	// ships (ABI.md §19).
	Skills []string `json:"skills,omitempty"`
	// LeftOut lists what the plugin lists that serve would leave out, and
	// why; Hostile is set when that is the whole plugin (it hides text or
	// offers look-alike names). Either fails the inspection.
	LeftOut []leftOutItem `json:"leftOut"`
	Hostile bool          `json:"hostile,omitempty"`
	// Needs lists what the module's imports ask of the host, and which
	// config key would grant it.
	Needs []string `json:"needs"`
	// Digest is the manifest digest of a plugin inspected from a registry,
	// and Asks the grants its artifact asks for (never given for asking).
	Digest string   `json:"digest,omitempty"`
	Asks   []string `json:"asks,omitempty"`
	// Description says whether the module ships a description of what it
	// offers (`plugin describe`) and how it compares with its lists:
	// "none", "matches its lists", or what differs.
	Description string `json:"description,omitempty"`

	// leftOut is the error LeftOut makes (nil for none), and leftOutLines
	// its lines, to print.
	leftOut      error
	leftOutLines []string
}

// importNeeds maps imports to what they would need granted.
var importNeeds = map[string]string{
	"extism:host/env.http_request":            "outbound HTTP through Extism's built-in http_request: answered by mcphost's egress, to the hosts allowed_hosts grants",
	"extism:host/user.get_access_token":       "an OAuth access token: refused (pass credentials through config)",
	"extism:host/user.get_keyring_secret":     "a keyring secret: refused (pass credentials through config)",
	"extism:host/user.create_message":         "asks the client's model (sampling), blocking: the client must declare sampling",
	"extism:host/user.create_elicitation":     "asks the user (elicitation), blocking: the client must declare elicitation",
	"extism:host/user.list_roots":             "reads the client's roots, blocking: the client must declare roots",
	"wasi_snapshot_preview1.path_open":        "may open files: it gets none (no directory is mounted)",
	"wasi_snapshot_preview1.environ_get":      "may read environment variables: it gets none",
	"wasi_snapshot_preview1.sock_accept":      "sockets: none are given",
	"extism:host/user.notify_progress":        "",
	"extism:host/user.notify_logging_message": "",
	"extism:host/user.input_read":             "",
	"extism:host/user.output_write":           "",
}

// providedModules are the import modules the host satisfies.
var providedModules = []string{"extism:host/env", "extism:host/user", "wasi_snapshot_preview1"}

const pluginUsage = `Usage:
  mcphost plugin inspect [--json] FILE.wasm              what a plugin offers and would need granted
  mcphost plugin test [--args TOOL=JSON]... FILE.wasm    call everything a plugin offers, check the replies
  mcphost plugin describe [--check] FILE.wasm            write what a plugin offers into its module, so hosts list it without compiling
  mcphost plugin warm [--config FILE]                    compile every plugin of a config into its cache_dir (for images that start warm)
  mcphost plugin new --lang LANG NAME [DIR]              scaffold a plugin that builds and loads as is (go, js, ts, c, rust, as, wat)
  mcphost plugin build [-o FILE.wasm] [DIR]              build the plugin in DIR, whatever its language (and pack DIR/skills)
  mcphost plugin skills [--dir DIR] FILE.wasm            pack Agent Skills into a plugin's module (ABI.md §19)
  mcphost plugin accept [--config FILE] [NAME...]        accept plugins' changed tool definitions (lock file)
  mcphost plugin push [--asks-…] FILE.wasm oci://R/P:TAG  publish a plugin to a registry (with the grants it asks for)
  mcphost plugin sign --key KEY.pem oci://R/P:TAG        sign a plugin in a registry (Sigstore bundle, key-based)
  mcphost plugin pull [--config FILE] REF                fetch a plugin into the plugin store
  mcphost plugin update [--config FILE] [NAME...]        resolve registry tags again and pin what they name now

mcphost plugin SUBCOMMAND --help describes a subcommand's flags.
`

func runPlugin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, pluginUsage)
		return &usageError{"plugin: expected a subcommand: inspect, test, describe, warm, new, build, skills, accept, push, sign, pull, update"}
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, pluginUsage)
		return nil
	case "inspect":
		return runInspect(ctx, args[1:], stdout, stderr)
	case "test":
		return runPluginTest(ctx, args[1:], stdout, stderr)
	case "describe":
		return runDescribe(ctx, args[1:], stdout, stderr)
	case "warm":
		return runWarm(ctx, args[1:], stdout, stderr)
	case "new":
		return runNew(args[1:], stdout, stderr)
	case "build":
		return runBuild(ctx, args[1:], stdout, stderr)
	case "skills":
		return runSkills(args[1:], stdout, stderr)
	case "accept":
		return runAccept(ctx, args[1:], stdout, stderr)
	case "push":
		return runPush(ctx, args[1:], stdout, stderr)
	case "pull":
		return runPull(ctx, args[1:], stdout, stderr)
	case "update":
		return runUpdate(ctx, args[1:], stdout, stderr)
	case "sign":
		return runSign(ctx, args[1:], stdout, stderr)
	default:
		fmt.Fprint(stderr, pluginUsage)
		return &usageError{fmt.Sprintf("plugin: unknown subcommand %q (expected inspect, test, describe, warm, new, build, skills, accept, push, sign, pull, update)", args[0])}
	}
}

func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcphost plugin inspect [--json] [--insecure] FILE.wasm|oci://REGISTRY/REPO:TAG")
	asJSON := fs.Bool("json", false, "print JSON")
	insecure := fs.Bool("insecure", false, "plain HTTP, to a registry on loopback only")
	if err := parseArgs(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &usageError{"usage: mcphost plugin inspect [--json] [--insecure] FILE.wasm|oci://REGISTRY/REPO:TAG"}
	}
	var in *inspection
	var err error
	if strings.HasPrefix(fs.Arg(0), "oci://") {
		in, err = inspectRemote(ctx, fs.Arg(0), *insecure)
	} else {
		in, err = inspect(ctx, fs.Arg(0))
	}
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(in); err != nil {
			return err
		}
	} else {
		printInspection(stdout, in)
	}
	if !in.Loads {
		return fmt.Errorf("%s does not load: %s", in.File, in.Error)
	}
	return in.leftOut
}

func inspect(ctx context.Context, path string) (*inspection, error) {
	wasm, err := host.ReadModuleFile(path)
	if err != nil {
		return nil, fmt.Errorf("inspect: %w", err)
	}
	sum := sha256.Sum256(wasm)
	in := &inspection{File: path, Size: int64(len(wasm)), SHA256: hex.EncodeToString(sum[:]),
		Exports: []string{}, Imports: []string{}, Needs: []string{},
		Tools: []string{}, Resources: []string{}, Templates: []string{}, Prompts: []string{}, LeftOut: []leftOutItem{}}

	// Nothing reaches wazero before the module limits are checked: a
	// 1 KB module can declare 2^32-1 locals, which wazero would allocate.
	checked, err := host.CheckModule(wasm)
	if err != nil {
		in.Error = err.Error()
		return in, nil
	}
	// The interpreter validates the module as the compiler would, without
	// making machine code that only the imports and exports are read of:
	// for a Go plugin that is milliseconds instead of seconds.
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	mod, err := rt.CompileModule(ctx, checked)
	if err != nil {
		in.Error = fmt.Sprintf("not a valid WebAssembly module: %v", err)
		return in, nil
	}
	for name := range mod.ExportedFunctions() {
		in.Exports = append(in.Exports, name)
	}
	sort.Strings(in.Exports)
	seen := map[string]bool{}
	for _, f := range mod.ImportedFunctions() {
		module, name, _ := f.Import()
		key := module + "." + name
		if seen[key] {
			continue
		}
		seen[key] = true
		in.Imports = append(in.Imports, key)
		if need := importNeeds[key]; need != "" {
			in.Needs = append(in.Needs, need)
		}
		provided := false
		for _, m := range providedModules {
			provided = provided || m == module
		}
		if !provided {
			in.Needs = append(in.Needs, fmt.Sprintf("import %s: no such module in mcphost, the plugin cannot load", key))
		}
	}
	sort.Strings(in.Imports)

	// Load it as the host would, with no grants and default limits.
	abs, _ := filepath.Abs(path)
	// An app reaching outside the grants (there are none here) is
	// reported in Needs rather than refusing the load.
	h, err := loadAlone(ctx, "inspected", path, "timeout = \"10s\"\n", host.Options{LoadEveryPlugin: true, ReportUngrantedUI: true})
	if err != nil {
		in.Error = strings.TrimPrefix(err.Error(), fmt.Sprintf("load plugin %q from %s: ", "inspected", abs))
		return in, nil
	}
	defer h.Close(context.WithoutCancel(ctx))
	p := h.Plugins()[0]
	in.Loads, in.Flavor, in.ABIVersion = true, p.Flavor, p.ABIVersion
	in.Tools = append(in.Tools, p.Tools...)
	in.Tasks = append(in.Tasks, p.Tasks...)
	in.Resources = append(in.Resources, p.Resources...)
	in.Templates = append(in.Templates, p.Templates...)
	in.Prompts = append(in.Prompts, p.Prompts...)
	in.Apps = appReports(p.Apps)
	for _, a := range p.Apps {
		for _, u := range a.Ungranted {
			in.Needs = append(in.Needs, "its app "+a.URI+" reaches "+u)
		}
	}
	in.Skills = p.Skills
	in.LeftOut, in.Hostile = leftOutItems(p), p.Hostile
	in.Description = p.ShippedDescription
	if in.Description == "" && p.Description != nil {
		in.Description = "none"
	}
	in.leftOut = checkLeftOut(path, []host.PluginInfo{p}, true)
	in.leftOutLines = leftOutLines("", p)
	return in, nil
}

func printInspection(w io.Writer, in *inspection) {
	fmt.Fprintf(w, "%s\n  size     %d bytes\n  sha256   %s\n", in.File, in.Size, in.SHA256)
	if in.Digest != "" {
		fmt.Fprintf(w, "  digest   %s\n", in.Digest)
	}
	if in.Loads {
		fmt.Fprintf(w, "  abi      %s, version %d\n", in.Flavor, in.ABIVersion)
	} else {
		fmt.Fprintf(w, "  loads    no: %s\n", in.Error)
	}
	list := func(label string, items []string) {
		if len(items) > 0 {
			fmt.Fprintf(w, "  %-8s %s\n", label, strings.Join(items, ", "))
		}
	}
	for _, l := range in.leftOutLines {
		fmt.Fprintf(w, "  LEFT OUT %s\n", l)
	}
	switch in.Description {
	case "":
	case "none":
		fmt.Fprintf(w, "  ships    no description (hosts compile it to list it; `mcphost plugin describe` writes one)\n")
	default:
		fmt.Fprintf(w, "  ships    a description that %s\n", in.Description)
	}
	list("tools", in.Tools)
	list("tasks", in.Tasks)
	list("resources", in.Resources)
	list("templates", in.Templates)
	list("prompts", in.Prompts)
	for _, a := range in.Apps {
		fmt.Fprintf(w, "  app      %s\n", describeApp(a))
	}
	list("skills", in.Skills)
	list("exports", in.Exports)
	list("imports", in.Imports)
	if len(in.Needs) == 0 {
		fmt.Fprintf(w, "  needs    nothing beyond what every plugin gets\n")
	}
	for _, n := range in.Needs {
		fmt.Fprintf(w, "  needs    %s\n", n)
	}
	if in.Digest != "" && len(in.Asks) == 0 {
		fmt.Fprintf(w, "  asks     nothing (the artifact declares no grants)\n")
	}
	for _, a := range in.Asks {
		fmt.Fprintf(w, "  asks     %s (granted only if the config says so)\n", a)
	}
}

// runAccept records the current definitions of the named plugins (all when
// none is named) in the lock file.
func runAccept(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcphost plugin accept [--config FILE] [NAME...]")
	config := fs.String("config", "mcphost.toml", "config file")
	if err := parseArgs(fs, args, stdout, stderr); err != nil {
		return err
	}
	cfg, err := host.LoadConfig(*config)
	if err != nil {
		return err
	}
	cfg.Server.Watch = false
	h, err := host.New(ctx, cfg, host.Options{Logger: newLogger("error", stderr)})
	if err != nil {
		return err
	}
	defer h.Close(context.WithoutCancel(ctx))
	if err := h.Accept(fs.Args()...); err != nil {
		return err
	}
	names := fs.Args()
	if len(names) == 0 {
		names = []string{"every plugin"}
	}
	fmt.Fprintf(stdout, "accepted %s in %s\n", strings.Join(names, ", "), cfg.Server.LockFile)
	return nil
}
