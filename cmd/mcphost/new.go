package main

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"
)

// templates holds the scaffolds of `mcphost plugin new`, one directory per
// language. A file ending in ".tmpl" is rendered with text/template and
// loses that suffix; any other file is copied as it is (the JSON readers and
// kernel declarations shared with the example plugins). A leading "plugin."
// in a file's name becomes the plugin's name, "gitignore" becomes
// ".gitignore" (go:embed leaves out dot files), and a ".sh" file is made
// executable.
//
//go:embed templates
var templates embed.FS

// languages maps --lang values to template directories.
var languages = map[string]string{"go": "go", "c": "c", "rust": "rust", "as": "as", "wat": "wat", "js": "js", "ts": "ts"}

// validPluginName is what `plugin new` accepts: usable as a file name, a
// Go package directory, a config name and a tool-name prefix.
var validPluginName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// scaffold is what templates can use.
type scaffold struct {
	Name string // the plugin's name
	Dir  string // where it is written, as given (slash-separated)

	// Go only: how the scaffold finds the SDK (see goModule).
	Go goModule

	// WAT only: the JSON the plugin outputs, escaped for a WAT string,
	// with its unescaped length and where it is placed in memory.
	ToolsJSON, ResultJSON             string
	ToolsLen, ResultLen, ResultOffset int
}

func runNew(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcphost plugin new [--lang go|js|ts|c|rust|as|wat] NAME [DIR]")
	lang := fs.String("lang", "go", "language: go, js (JavaScript), ts (TypeScript), c, rust, as (AssemblyScript), wat")
	if err := parseArgs(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return &usageError{"usage: mcphost plugin new --lang LANG NAME [DIR]"}
	}
	name := fs.Arg(0)
	if !validPluginName.MatchString(name) {
		return &usageError{fmt.Sprintf("plugin new: name %q must be 1-32 of a-z, 0-9, _ starting with a letter", name)}
	}
	tmplDir, ok := languages[*lang]
	if !ok {
		return &usageError{fmt.Sprintf("plugin new: unknown --lang %q (expected %s)", *lang, strings.Join(sortedKeys(languages), ", "))}
	}
	dir := path.Join("plugins", name)
	if fs.NArg() == 2 {
		dir = filepath.ToSlash(fs.Arg(1))
	}
	data := newScaffold(name, dir)
	if tmplDir == "go" {
		m, err := findGoModule(dir)
		if err != nil {
			return fmt.Errorf("plugin new: %w", err)
		}
		data.Go = m
	}
	written, err := writeScaffold(tmplDir, dir, data)
	if err != nil {
		return fmt.Errorf("plugin new: %w", err)
	}
	if tmplDir == "go" && !data.Go.InRepo {
		mod, err := writeGoModule(dir, name, data.Go)
		written = append(written, mod...)
		if err != nil {
			return fmt.Errorf("plugin new: %w", err)
		}
	}
	for _, f := range written {
		fmt.Fprintf(stdout, "wrote %s\n", f)
	}
	fmt.Fprintf(stdout, "next: build it with `mcphost plugin build %s` (%s/README.md says what it needs), add a [[plugin]] table, run mcphost validate\n", dir, dir)
	return nil
}

func newScaffold(name, dir string) scaffold {
	s := scaffold{Name: name, Dir: dir}
	tools := fmt.Sprintf(`{"tools":[{"name":"%s_ping","description":"Answers pong.","inputSchema":{"type":"object"}}]}`, name)
	result := `{"content":[{"type":"text","text":"pong"}]}`
	esc := strings.NewReplacer(`"`, `\"`)
	s.ToolsJSON, s.ToolsLen = esc.Replace(tools), len(tools)
	s.ResultJSON, s.ResultLen = esc.Replace(result), len(result)
	s.ResultOffset = (len(tools)/256 + 1) * 256
	return s
}

// writeScaffold renders the templates of tmplDir into dir, refusing to
// overwrite anything.
func writeScaffold(tmplDir, dir string, data scaffold) ([]string, error) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("%s exists and is not empty", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	root := "templates/" + tmplDir
	err := fs.WalkDir(templates, root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		text, err := templates.ReadFile(p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, root+"/")
		out := filepath.Join(dir, filepath.FromSlash(path.Join(path.Dir(rel), scaffoldFileName(path.Base(rel), data.Name))))
		if strings.HasSuffix(p, ".tmpl") {
			t, err := template.New(p).Option("missingkey=error").Parse(string(text))
			if err != nil {
				return fmt.Errorf("template %s: %w", p, err)
			}
			var b strings.Builder
			if err := t.Execute(&b, data); err != nil {
				return fmt.Errorf("render %s: %w", out, err)
			}
			text = []byte(b.String())
		}
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(out, ".sh") {
			mode = 0o755
		}
		f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			return err
		}
		if _, err := f.Write(text); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", out, err)
		}
		written = append(written, out)
		return f.Close()
	})
	return written, err
}

// scaffoldFileName is the name a template file gets in a scaffold of the
// plugin name (see templates).
func scaffoldFileName(base, name string) string {
	base = strings.TrimSuffix(base, ".tmpl")
	if base == "gitignore" {
		return ".gitignore"
	}
	if rest, ok := strings.CutPrefix(base, "plugin."); ok {
		return name + "." + rest
	}
	return base
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
