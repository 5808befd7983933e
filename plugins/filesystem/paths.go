package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/text/unicode/norm"

	"github.com/mcphost/mcphost/sdk"
)

// configKey names the plugin config value that lists the allowed
// directories (guest paths); without it they are every granted directory.
const configKey = "allowed_directories"

var (
	dirsOnce sync.Once
	dirs     []string // the allowed directories, as the reference keeps them
	dirsErr  error    // why there are none: every tool then fails with it
)

// allowedDirectories returns the directories this plugin serves, computed
// once per instance (its grants and config do not change while it runs).
func allowedDirectories(ctx *sdk.Context) ([]string, error) {
	dirsOnce.Do(func() { dirs, dirsErr = loadAllowedDirectories(ctx) })
	return dirs, dirsErr
}

// loadAllowedDirectories is the reference's start-up: each configured
// directory, plus its real path when that differs, kept if it is an
// accessible directory. The configured directories are the config key's
// list, each of which must lie inside a granted directory, or else every
// granted directory (WASI preopen). Nothing is reachable that is not
// granted: the host refuses it whatever this list says.
func loadAllowedDirectories(ctx *sdk.Context) ([]string, error) {
	granted := preopens()
	if len(granted) == 0 {
		return nil, errors.New("no allowed directories: the plugin has no allowed_paths grant (mount each directory at its own path, e.g. allowed_paths = { \"/home/me/proj\" = \"/home/me/proj\" })")
	}
	wanted := granted
	if v, ok := ctx.Config(configKey); ok && strings.TrimSpace(v) != "" {
		list, err := parseDirList(v)
		if err != nil {
			return nil, fmt.Errorf("config %s: %w", configKey, err)
		}
		for _, d := range list {
			if !path.IsAbs(d) {
				return nil, fmt.Errorf("config %s: %q is not an absolute path", configKey, d)
			}
			if !isPathWithinAllowedDirectories(path.Clean(d), granted) {
				return nil, fmt.Errorf("config %s: %q is not inside a granted directory (allowed_paths guest paths: %s)", configKey, d, strings.Join(granted, ", "))
			}
		}
		wanted = list
	}
	var all []string
	for _, d := range wanted {
		abs := jsResolve(d)
		orig := normalizePath(abs)
		if real, err := realpath(abs); err == nil && normalizePath(real) != orig {
			all = append(all, orig, normalizePath(real))
		} else {
			all = append(all, orig)
		}
	}
	var ok []string
	for _, d := range all {
		fi, err := os.Stat(d)
		switch {
		case err != nil:
			ctx.Log(sdk.LevelWarning, "Warning: Cannot access directory "+d+", skipping")
		case !fi.IsDir():
			ctx.Log(sdk.LevelWarning, "Warning: "+d+" is not a directory, skipping")
		default:
			ok = append(ok, d)
		}
	}
	if len(ok) == 0 {
		return nil, errors.New("Error: None of the specified directories are accessible")
	}
	return ok, nil
}

// parseDirList reads the config list: a JSON array of strings, or paths
// separated by ":" (as in PATH).
func parseDirList(v string) ([]string, error) {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "[") {
		var list []string
		if err := json.Unmarshal([]byte(v), &list); err != nil {
			return nil, fmt.Errorf("not a JSON array of strings: %w", err)
		}
		return list, nil
	}
	var list []string
	for _, d := range strings.Split(v, ":") {
		if d = strings.TrimSpace(d); d != "" {
			list = append(list, d)
		}
	}
	return list, nil
}

// jsResolve is Node's path.resolve of one path (POSIX), relative paths
// taken from "/" (the guest's working directory).
func jsResolve(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return path.Clean(p)
}

// jsJoin is Node's path.join (POSIX).
func jsJoin(parts ...string) string {
	var nonEmpty []string
	for _, p := range parts {
		if p != "" {
			nonEmpty = append(nonEmpty, p)
		}
	}
	if len(nonEmpty) == 0 {
		return "."
	}
	joined := strings.Join(nonEmpty, "/")
	clean := path.Clean(joined)
	if strings.HasSuffix(joined, "/") && clean != "/" {
		clean += "/"
	}
	return clean
}

// jsRelative is Node's path.relative (POSIX), both paths resolved from "/".
func jsRelative(from, to string) string {
	from, to = jsResolve(from), jsResolve(to)
	if from == to {
		return ""
	}
	fp := splitPath(from)
	tp := splitPath(to)
	i := 0
	for i < len(fp) && i < len(tp) && fp[i] == tp[i] {
		i++
	}
	var out []string
	for range fp[i:] {
		out = append(out, "..")
	}
	out = append(out, tp[i:]...)
	return strings.Join(out, "/")
}

// splitPath splits an absolute path into its non-empty components.
func splitPath(p string) []string {
	var parts []string
	for _, s := range strings.Split(p, "/") {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return parts
}

// jsDirname is Node's path.dirname (POSIX) of an absolute, clean path.
func jsDirname(p string) string { return path.Dir(p) }

var (
	multiSlash = regexp.MustCompile(`/+`)
	driveLike  = regexp.MustCompile(`^[A-Za-z]:`)
	windowsAbs = regexp.MustCompile(`^(?:[A-Za-z]:)(?:[\\/]|$)`)
)

// normalizePath is the reference's normalizePath on a POSIX host.
func normalizePath(p string) string {
	p = jsTrim(p)
	start, end := 0, len(p)
	if end > 0 && (p[0] == '"' || p[0] == '\'') {
		start = 1
	}
	if end > start && (p[end-1] == '"' || p[end-1] == '\'') {
		end--
	}
	p = p[start:end]
	if strings.HasPrefix(p, "/") {
		p = multiSlash.ReplaceAllString(p, "/")
		if len(p) > 1 && strings.HasSuffix(p, "/") {
			p = p[:len(p)-1]
		}
		return p
	}
	if driveLike.MatchString(p) {
		p = strings.ReplaceAll(p, "/", `\`)
	}
	p = strings.ReplaceAll(p, `\\`, `\`)
	n := jsNormalize(p)
	if driveLike.MatchString(n) {
		n = strings.ReplaceAll(n, "/", `\`)
		n = strings.ToUpper(n[:1]) + n[1:]
	}
	return n
}

// jsNormalize is Node's path.normalize (POSIX): "." for "", a trailing
// slash kept.
func jsNormalize(p string) string {
	if p == "" {
		return "."
	}
	n := path.Clean(p)
	if strings.HasSuffix(p, "/") && n != "/" {
		n += "/"
	}
	return n
}

// isPathWithinAllowedDirectories is the reference's check: the path, made
// absolute, is one of the directories or lies below one.
func isPathWithinAllowedDirectories(p string, allowed []string) bool {
	if p == "" || len(allowed) == 0 || strings.Contains(p, "\x00") {
		return false
	}
	np := jsResolve(jsNormalize(p))
	for _, d := range allowed {
		if d == "" || strings.Contains(d, "\x00") {
			continue
		}
		nd := jsResolve(jsNormalize(d))
		if np == nd || nd == "/" && strings.HasPrefix(np, "/") || strings.HasPrefix(np, nd+"/") {
			return true
		}
	}
	return false
}

// expandHome expands "~" as the reference does, from HOME (which the
// plugin sees only if its env grant passes it; else "/").
func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		home := os.Getenv("HOME")
		if home == "" {
			home = "/"
		}
		return jsJoin(home, p[1:])
	}
	return p
}

// resolveRelative resolves a relative path against the first allowed
// directory under which it stays (else the first one), as the reference.
func resolveRelative(rel string, allowed []string) string {
	for _, d := range allowed {
		c := jsResolve(d + "/" + rel)
		if isPathWithinAllowedDirectories(normalizePath(c), allowed) {
			return c
		}
	}
	return jsResolve(allowed[0] + "/" + rel)
}

// validatePath is the reference's validatePath: the real path of requested
// if it lies inside the allowed directories, symlinks resolved; for a path
// that does not exist yet, its existing part resolved and the rest
// appended. Its error texts are the reference's.
func validatePath(ctx *sdk.Context, requested string) (string, error) {
	allowed, err := allowedDirectories(ctx)
	if err != nil {
		return "", err
	}
	expanded := expandHome(requested)
	if windowsAbs.MatchString(expanded) {
		return "", fmt.Errorf("Access denied - Windows-style path received on a POSIX host: %s", requested)
	}
	var absolute string
	if strings.HasPrefix(expanded, "/") {
		absolute = jsResolve(expanded)
	} else {
		absolute = resolveRelative(expanded, allowed)
	}
	if !isPathWithinAllowedDirectories(normalizePath(absolute), allowed) {
		return "", fmt.Errorf("Access denied - path outside allowed directories: %s not in %s", absolute, strings.Join(allowed, ", "))
	}
	real, err := realpath(absolute)
	if err == nil {
		if !isPathWithinAllowedDirectories(normalizePath(real), allowed) {
			return "", fmt.Errorf("Access denied - symlink target outside allowed directories: %s not in %s", real, strings.Join(allowed, ", "))
		}
		return real, nil
	}
	if isErrno(err, syscall.EIO) && !isWritable(absolute) {
		// A read-only grant shows the plugin no links (WASI's adapter of a
		// read-only file system follows them): the host refused one that
		// leads outside.
		return "", fmt.Errorf("Access denied - symlink target outside allowed directories: %s leads outside them (the host refused to follow a symbolic link) not in %s", absolute, strings.Join(allowed, ", "))
	}
	if !isErrno(err, syscall.ENOENT) {
		return "", nodeError("realpath", absolute, err)
	}
	resolved, err := resolveUnicodeEquivalentPath(absolute, allowed)
	if err != nil {
		if isErrno(err, syscall.ENOENT) {
			return "", fmt.Errorf("Parent directory does not exist: %s", jsDirname(absolute))
		}
		return "", err
	}
	return resolved, nil
}

// resolveUnicodeEquivalentPath walks absolute from its allowed directory,
// matching each existing component exactly or by Unicode NFC equivalence
// and resolving symlinks, and appends the components that do not exist.
func resolveUnicodeEquivalentPath(absolute string, allowed []string) (string, error) {
	byLength := slices.Clone(allowed)
	slices.SortStableFunc(byLength, func(a, b string) int { return len(b) - len(a) })
	base := ""
	for _, d := range byLength {
		if isPathWithinAllowedDirectories(normalizePath(absolute), []string{d}) {
			base = d
			break
		}
	}
	if base == "" {
		return absolute, nil
	}
	current, err := realpath(base)
	if err != nil {
		return "", nodeError("realpath", base, err)
	}
	parts := splitPath(jsRelative(base, absolute))
	for i, part := range parts {
		names, err := readdirNames(current)
		if err != nil {
			return "", nodeError("scandir", current, err)
		}
		var matches []string
		if slices.Contains(names, part) {
			matches = []string{part}
		} else {
			want := norm.NFC.String(part)
			for _, n := range names {
				if norm.NFC.String(n) == want {
					matches = append(matches, n)
				}
			}
		}
		if len(matches) > 1 {
			return "", fmt.Errorf("Ambiguous Unicode path component: %s", part)
		}
		if len(matches) == 0 {
			return jsJoin(append([]string{current}, parts[i:]...)...), nil
		}
		next := jsJoin(current, matches[0])
		current, err = realpath(next)
		if err != nil {
			return "", nodeError("realpath", next, err)
		}
		if !isPathWithinAllowedDirectories(normalizePath(current), allowed) {
			return "", fmt.Errorf("Access denied - symlink target outside allowed directories: %s not in %s", current, strings.Join(allowed, ", "))
		}
	}
	return current, nil
}

// readdirNames lists a directory's names.
func readdirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// maxSymlinks bounds symbolic links followed by one realpath (Linux's 40).
const maxSymlinks = 40

// realpath resolves every symbolic link in the absolute path p, as
// realpath(3), itself: the host refuses to follow links that leave a
// grant, and the reference reports where such a link points. Only paths
// inside a granted directory can be looked at: a path that leads outside
// them ends where it leaves them (the caller then refuses it), and the
// directories above a grant are taken as they are named.
func realpath(p string) (string, error) {
	granted := preopens()
	rest := splitPath(p)
	asked := len(rest) // how many of rest's last components p named
	resolved := "/"
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		asked = min(asked, len(rest))
		switch c {
		case ".":
			continue
		case "..":
			resolved = path.Dir(resolved)
			continue
		}
		next := path.Join(resolved, c)
		if !isPathWithinAllowedDirectories(next, granted) {
			if isAncestorOfAny(next, granted) || slices.Contains(rest, "..") {
				resolved = next // taken as named: nothing outside can be looked at
				continue
			}
			// Where the path leaves the grants, through the rest of the
			// link's target (known from the link itself). Whether what p
			// names below it exists out there cannot be known (nor is it
			// revealed).
			return path.Join(append([]string{next}, rest[:len(rest)-asked]...)...), nil
		}
		fi, err := os.Lstat(next)
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			if !fi.IsDir() && len(rest) > 0 {
				return "", syscall.ENOTDIR
			}
			resolved = next
			continue
		}
		links++
		if links > maxSymlinks {
			return "", syscall.ELOOP
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(target, "/") {
			resolved = "/"
		}
		rest = append(splitPath(target), rest...)
	}
	return resolved, nil
}

// isAncestorOfAny reports whether p is a directory above one of dirs.
func isAncestorOfAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == "/" || strings.HasPrefix(d, p+"/") {
			return true
		}
	}
	return false
}

// grantOf is the granted directory (WASI preopen) holding p, or "".
func grantOf(p string) string {
	grant := ""
	for _, d := range preopens() {
		if isPathWithinAllowedDirectories(p, []string{d}) && len(d) > len(grant) {
			grant = d
		}
	}
	return grant
}

var (
	writableMu sync.Mutex
	writableOf = map[string]bool{}
)

// isWritable reports whether the grant holding the real path p is
// writable ("rw:"). A read-only grant cannot make a directory (WASI gives
// ENOSYS), a writable one finds its own directory existing (EEXIST): asking
// to create the grant's directory tells them apart without changing it.
func isWritable(p string) bool {
	grant := grantOf(p)
	if grant == "" {
		return false
	}
	writableMu.Lock()
	defer writableMu.Unlock()
	w, ok := writableOf[grant]
	if !ok {
		err := os.Mkdir(grant, 0o700)
		w = isErrno(err, syscall.EEXIST)
		writableOf[grant] = w
	}
	return w
}

// readOnlyError is the refusal of a write to a read-only grant, worded as
// Node words the error of a read-only file system.
func readOnlyError(sysc, p string) error {
	return nodeError(sysc, p, syscall.EROFS)
}
