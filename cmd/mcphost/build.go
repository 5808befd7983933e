package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mcphost/mcphost/internal/jsbundle"
)

// buildKind is how `plugin build` builds a directory.
type buildKind string

const (
	buildScript buildKind = "build.sh"   // C, Rust, AssemblyScript, WAT scaffolds
	buildGo     buildKind = "go"         // a Go package (module of its own or not)
	buildJS     buildKind = "javascript" // a JavaScript or TypeScript entry
)

// detectBuild tells how dir is built: its build.sh when it has one, else
// go build when it holds Go files, else the JavaScript bundler when it has
// an entry file (jsbundle.Entries).
func detectBuild(dir string) (buildKind, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory", dir)
	}
	if isRegular(filepath.Join(dir, "build.sh")) {
		return buildScript, nil
	}
	if goFiles, _ := filepath.Glob(filepath.Join(dir, "*.go")); len(goFiles) > 0 {
		return buildGo, nil
	}
	if _, err := jsbundle.FindEntry(dir); err == nil {
		return buildJS, nil
	}
	return "", fmt.Errorf("cannot tell how to build %s: it has no build.sh, no Go files and no JavaScript or TypeScript entry (%s)",
		dir, strings.Join(jsbundle.Entries, ", "))
}

func isRegular(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

const buildSynopsis = "mcphost plugin build [--lang LANG] [-o FILE.wasm] [DIR]"

// runBuild builds the plugin in a directory the way its language needs, so
// that every scaffold has the same build command.
func runBuild(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet(buildSynopsis + "\n\nBuilds the plugin in DIR (default .): runs its build.sh (C, Rust, AssemblyScript, WAT),\n" +
		"go build for Go (GOOS=wasip1 GOARCH=wasm -buildmode=c-shared), or bundles JavaScript and\n" +
		"TypeScript (no Node needed) into the JavaScript engine's module. The module is written to\n" +
		"DIR/NAME.wasm, NAME being DIR's name, unless -o says otherwise (not for build.sh, which names it).")
	out := fs.String("o", "", "where to write the module (default DIR/NAME.wasm)")
	lang := fs.String("lang", "", "build as this language instead of guessing: go, js or ts (a build.sh directory's own script may use it)")
	if err := parseArgs(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return &usageError{"usage: " + buildSynopsis}
	}
	dir := "."
	if fs.NArg() == 1 {
		dir = fs.Arg(0)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("plugin build: %w", err)
	}
	var kind buildKind
	switch *lang {
	case "":
		if kind, err = detectBuild(abs); err != nil {
			return fmt.Errorf("plugin build: %w", err)
		}
	case "go":
		kind = buildGo
	case "js", "ts":
		kind = buildJS
	default:
		return &usageError{fmt.Sprintf("plugin build: --lang %q: go, js or ts (other languages build with their build.sh)", *lang)}
	}
	target := *out
	if target == "" {
		target = filepath.Join(abs, filepath.Base(abs)+".wasm")
	} else if target, err = filepath.Abs(target); err != nil {
		return fmt.Errorf("plugin build: %w", err)
	}
	switch kind {
	case buildScript:
		if *out != "" {
			return &usageError{"plugin build: -o does not apply to a build.sh, which names its module"}
		}
		cmd := exec.CommandContext(ctx, "bash", "build.sh")
		cmd.Dir, cmd.Stdout, cmd.Stderr = abs, stderr, stderr
		if err := cmd.Run(); err != nil {
			var exit *exec.ExitError
			if errors.As(err, &exit) && exit.ExitCode() == 3 {
				return fmt.Errorf("plugin build: %s/build.sh: its toolchain is missing (it says which above)", dir)
			}
			return fmt.Errorf("plugin build: %s/build.sh: %w", dir, err)
		}
		fmt.Fprintf(stdout, "built %s with its build.sh\n", dir)
		if isRegular(target) {
			err = buildSkills(abs, target, stdout)
		} else if st, serr := os.Stat(filepath.Join(abs, "skills")); serr == nil && st.IsDir() {
			err = fmt.Errorf("%s/build.sh wrote no %s to pack skills/ into", dir, target)
		}
	case buildGo:
		err = buildGoPlugin(ctx, abs, target, stdout, stderr)
		if err == nil {
			err = buildSkills(abs, target, stdout)
		}
	default:
		err = buildJSPlugin(abs, target, stdout, stderr)
		if err == nil {
			err = buildSkills(abs, target, stdout)
		}
	}
	if err != nil && !strings.HasPrefix(err.Error(), "plugin build:") {
		err = fmt.Errorf("plugin build: %w", err)
	}
	return err
}

// buildGoPlugin runs go build for wasip1 in dir.
func buildGoPlugin(ctx context.Context, dir, target string, stdout, stderr io.Writer) error {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("plugin build: a Go plugin needs the go command (https://go.dev/dl/), not found on PATH: %w", err)
	}
	cmd := exec.CommandContext(ctx, goTool, "build", "-buildmode=c-shared", "-o", target, ".")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, stderr, stderr
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("plugin build: go build in %s: %w", dir, err)
	}
	fmt.Fprintf(stdout, "built %s (Go)\n", relOrAbs(target))
	return nil
}

// buildJSPlugin bundles dir's entry and writes the engine's module with
// the bundle in it.
func buildJSPlugin(dir, target string, stdout, stderr io.Writer) error {
	entry, err := jsbundle.FindEntry(dir)
	if err != nil {
		return fmt.Errorf("plugin build: %w", err)
	}
	res, err := jsbundle.Bundle(dir, entry)
	if err != nil {
		return fmt.Errorf("plugin build: %w", err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	wasm, err := assembleJSPlugin(res)
	if err != nil {
		return fmt.Errorf("plugin build: %w", err)
	}
	if err := writeFileAtomic(target, wasm); err != nil {
		return fmt.Errorf("plugin build: %w", err)
	}
	fmt.Fprintf(stdout, "built %s (JavaScript engine with %s bundled: %d bytes of JavaScript)\n", relOrAbs(target), entry, len(res.JS))
	return nil
}

// writeFileAtomic writes data to a temporary file beside path and renames
// it into place, so that a host watching path never loads half a module.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// relOrAbs is path relative to the working directory when it lies below
// it, else path.
func relOrAbs(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	if rel, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}
