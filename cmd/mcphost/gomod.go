package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"text/template"
)

// mcphostModule is the module path of mcphost. A Go scaffold inside a
// checkout of it is one of its packages.
const mcphostModule = "github.com/mcphost/mcphost"

// sdkGo is the go line of sdk/go.mod, which a scaffold made without a
// checkout to read it from takes (TestSDKGoLine keeps the two equal).
const sdkGo = "1.24"

// goModule says how a Go scaffold finds the SDK.
type goModule struct {
	// InRepo: the scaffold is inside an mcphost checkout's module and
	// builds as one of its packages, from RepoRoot; it gets no go.mod.
	InRepo bool
	// RepoRoot is the mcphost checkout the scaffold uses: the one it is
	// in, else the one around the working directory, else the one this
	// binary was built from; "" when there is none.
	RepoRoot string
	// RepoDir is the scaffold's directory relative to RepoRoot, slash-
	// separated (InRepo only).
	RepoDir string
}

// findGoModule decides how the Go scaffold at dir finds the SDK.
func findGoModule(dir string) (goModule, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return goModule{}, err
	}
	if root, path := enclosingModule(abs); path == mcphostModule {
		rel, err := filepath.Rel(root, abs)
		if err != nil {
			return goModule{}, err
		}
		return goModule{InRepo: true, RepoRoot: root, RepoDir: filepath.ToSlash(rel)}, nil
	}
	if wd, err := os.Getwd(); err == nil {
		if root, path := enclosingModule(wd); path == mcphostModule {
			return goModule{RepoRoot: root}, nil
		}
	}
	// This file's path as compiled (absent with -trimpath) is in the
	// checkout the binary was built from: cmd/mcphost/gomod.go.
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			if r, path := enclosingModule(root); r == root && path == mcphostModule {
				return goModule{RepoRoot: root}, nil
			}
		}
	}
	return goModule{}, nil
}

// moduleLine and goLine match those directives of a go.mod.
var (
	moduleLine = regexp.MustCompile(`(?m)^module\s+"?([^\s"]+)"?\s*$`)
	goLine     = regexp.MustCompile(`(?m)^go\s+(\S+)\s*$`)
	pdkRequire = regexp.MustCompile(`(?m)^\s*(?:require\s+)?github\.com/extism/go-pdk\s+(v\S+)`)
)

// enclosingModule returns the root and module path of the Go module that
// holds dir (which need not exist yet), or "", "".
func enclosingModule(dir string) (root, path string) {
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			if m := moduleLine.FindSubmatch(data); m != nil {
				return dir, string(m[1])
			}
			return dir, ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ""
		}
		dir = parent
	}
}

// goModTemplate is the go.mod of a Go scaffold outside a checkout.
var goModTemplate = template.Must(template.New("go.mod").Parse(`module {{.Name}}

go {{.Go}}
{{if .Version}}
require (
	github.com/mcphost/mcphost/abi {{.Version}}
	github.com/mcphost/mcphost/sdk {{.Version}}
)
{{end}}{{if .PDK}}
require github.com/extism/go-pdk {{.PDK}} // indirect
{{end}}{{if .ReplaceSDK}}
// The SDK and the ABI come from the mcphost checkout this plugin was made
// from (see README.md). To use a release instead, delete these lines and
// run: go get github.com/mcphost/mcphost/sdk@VERSION && go mod tidy
replace (
	github.com/mcphost/mcphost/abi => {{.ReplaceABI}}
	github.com/mcphost/mcphost/sdk => {{.ReplaceSDK}}
)
{{end}}`))

// writeGoModule gives a Go scaffold outside an mcphost checkout a module
// of its own: a go.mod that requires the SDK and ABI modules and what the
// SDK imports, and replaces them with sdk/ and abi/ of the checkout at
// m.RepoRoot, whose sdk/go.sum it copies (so it builds offline, from the
// module cache the checkout's builds filled). Its go line is the SDK's, not
// the checkout's: a plugin needs only the Go that builds the SDK. With no
// checkout it requires the release this binary is, if it is one.
func writeGoModule(dir, name string, m goModule) ([]string, error) {
	// Version stays empty with neither a checkout nor a release: go mod
	// tidy then requires the latest SDK.
	data := struct{ Name, Go, Version, PDK, ReplaceABI, ReplaceSDK string }{
		Name: name, Go: sdkGo,
	}
	var sum []byte
	if m.RepoRoot != "" {
		// Any version will do: the replace directives supply the code.
		data.Version = "v0.0.0-00010101000000-000000000000"
		data.ReplaceABI = modulePath(filepath.Join(m.RepoRoot, "abi"))
		data.ReplaceSDK = modulePath(filepath.Join(m.RepoRoot, "sdk"))
		mod, err := os.ReadFile(filepath.Join(m.RepoRoot, "sdk", "go.mod"))
		if err != nil {
			return nil, fmt.Errorf("read the checkout's sdk/go.mod: %w", err)
		}
		if g := goLine.FindSubmatch(mod); g != nil {
			data.Go = string(g[1])
		}
		// The SDK imports github.com/extism/go-pdk, and go.mod must list
		// the module of every package a build uses.
		if p := pdkRequire.FindSubmatch(mod); p != nil {
			data.PDK = string(p[1])
		}
		sum, err = os.ReadFile(filepath.Join(m.RepoRoot, "sdk", "go.sum"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("read the checkout's sdk/go.sum: %w", err)
		}
	} else if v := buildVersion(); isRelease(v) {
		data.Version = v
	}
	var text bytes.Buffer
	if err := goModTemplate.Execute(&text, data); err != nil {
		return nil, err
	}
	var written []string
	for _, f := range []struct {
		name string
		data []byte
	}{{"go.mod", text.Bytes()}, {"go.sum", sum}} {
		if len(f.data) == 0 {
			continue
		}
		out := filepath.Join(dir, f.name)
		if err := writeNew(out, f.data); err != nil {
			return written, err
		}
		written = append(written, out)
	}
	return written, nil
}

// modulePath writes a directory as the right-hand side of a replace
// directive, quoted when it holds a space or a quote.
func modulePath(dir string) string {
	if strings.ContainsAny(dir, " \t\"'`") {
		return strconv.Quote(dir)
	}
	return dir
}

// releaseVersion matches a semantic version; pseudoVersion the timestamp
// and commit that end a pseudo-version.
var (
	releaseVersion = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)
	pseudoVersion  = regexp.MustCompile(`\d{14}-[0-9a-f]{12}$`)
)

// isRelease says whether v is the version of a release (v1.2.3), not a
// pseudo-version, a +dirty build or "dev".
func isRelease(v string) bool {
	return releaseVersion.MatchString(v) && !pseudoVersion.MatchString(v)
}

// writeNew writes a file that must not exist yet.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
