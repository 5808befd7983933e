package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mcphost/mcphost/host"
)

const skillsUsage = "usage: mcphost plugin skills [--dir DIR] [--remove] [-o OUT.wasm] FILE.wasm"

// runSkills writes a skills directory into a module (its mcphost.skills
// section, ABI.md §19), replacing the skills it shipped, or removes them.
func runSkills(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet(skillsUsage[len("usage: "):] + "\n\nPacks the Agent Skills of DIR (default: skills/ beside FILE), one directory per skill with a\n" +
		"SKILL.md, into FILE, checked as a host checks them at load. `plugin build` does it for a plugin\n" +
		"directory that has skills/. Run it before `plugin describe`, pinning sha256, signing or pushing.")
	dir := fs.String("dir", "", "the skills directory (default: skills/ in FILE's directory)")
	remove := fs.Bool("remove", false, "remove the skills FILE ships instead")
	out := fs.String("o", "", "write the module to `OUT.wasm` instead of replacing FILE")
	if err := parseArgs(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() != 1 || (*remove && *dir != "") {
		return &usageError{skillsUsage}
	}
	path := fs.Arg(0)
	if *dir == "" {
		*dir = filepath.Join(filepath.Dir(path), "skills")
	}
	target := *out
	if target == "" {
		target = path
	}
	var packed []byte
	if !*remove {
		var err error
		if packed, err = host.PackSkills(*dir); err != nil {
			return fmt.Errorf("plugin skills: %w", err)
		}
	}
	n, err := embedSkills(path, target, packed)
	if err != nil {
		return fmt.Errorf("plugin skills: %w", err)
	}
	if *remove {
		fmt.Fprintf(stdout, "%s ships no skills\n", relOrAbs(target))
		return nil
	}
	fmt.Fprintf(stdout, "%s ships the skills of %s (%d bytes)\n", relOrAbs(target), relOrAbs(*dir), n)
	return nil
}

// embedSkills writes the module at path, with packed as its skills, to
// target; it returns the section's size.
func embedSkills(path, target string, packed []byte) (int, error) {
	wasm, err := host.ReadModuleFile(path)
	if err != nil {
		return 0, err
	}
	embedded, err := host.EmbedSkills(wasm, packed)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if err := writeFileAtomic(target, embedded); err != nil {
		return 0, err
	}
	return len(packed), nil
}

// buildSkills packs dir/skills into the module just built at target, when
// dir has a skills directory.
func buildSkills(dir, target string, stdout io.Writer) error {
	skillsDir := filepath.Join(dir, "skills")
	if st, err := os.Stat(skillsDir); errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	} else if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", skillsDir)
	}
	packed, err := host.PackSkills(skillsDir)
	if err != nil {
		return err
	}
	n, err := embedSkills(target, target, packed)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "packed %s into %s (%d bytes)\n", relOrAbs(skillsDir), relOrAbs(target), n)
	return nil
}
