// Package skills reads, checks and writes the Agent Skills a plugin ships
// (abi/ABI.md §19): every file of its skills/ directory, UTF-8 text, in a
// custom section of its module named SectionName. The host serves them
// under the MCP Skills extension (io.modelcontextprotocol/skills,
// SEP-2640); `mcphost plugin build` and `mcphost plugin skills` write the
// section.
//
// Skills inside the module travel with it wherever it goes (a copy, an OCI
// artifact, a container image) and are covered by whatever covers the file:
// its sha256 in the config or the lock file, a registry digest, a
// signature; a new module is a new generation, so hot reload brings new
// skills with it. The host never compiles the section (its rewrite drops
// every custom section but names).
//
// Everything a skill holds is checked before it is served, and one fault
// refuses the whole section, naming the skill and the file: the layout
// (one directory per skill, a SKILL.md at its root, no path leaving it),
// the SKILL.md front matter (Agent Skills: name and description required,
// the name's format, the name equal to its directory), every file's text
// (UTF-8, no hidden or control characters, as every text a plugin offers)
// and the sizes.
package skills

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/mcphost/mcphost/host/internal/bridge"
	"github.com/mcphost/mcphost/host/internal/wasmbin"
	"github.com/mcphost/mcphost/internal/regularfile"
)

// SectionName is the name of the custom section that holds a plugin's
// skills.
const SectionName = "mcphost.skills"

// Format is the version of the section's encoding this host writes and
// reads; a section of another format refuses the plugin (its skills would
// otherwise be silently dropped).
const Format = 1

// Limits. A skill's own limits are SEP-2640's (512 files, 16 MiB), which
// MaxSectionBytes bounds further: the host keeps every skill of every
// loaded generation in memory.
const (
	// MaxSectionBytes bounds the section (the encoded files of every skill).
	MaxSectionBytes = 4 << 20
	// MaxFileBytes bounds one file.
	MaxFileBytes = 1 << 20
	// MaxFilesPerSkill bounds a skill's files, SKILL.md included.
	MaxFilesPerSkill = 512
	// MaxSkills bounds the skills of one plugin.
	MaxSkills = 64
	// MaxPathBytes bounds a file's path within the skills directory.
	MaxPathBytes = 256
	// MaxDepth bounds the directories of a path (the skill's included).
	MaxDepth = 8
	// MaxFrontmatterBytes bounds the YAML front matter of a SKILL.md.
	MaxFrontmatterBytes = 64 << 10
)

// ManifestName is the file at the root of every skill.
const ManifestName = "SKILL.md"

// File is one file of a plugin's skills directory: Path is relative to
// that directory, with '/' separators, its first segment the skill's
// directory.
type File struct {
	Path string `json:"path"`
	Text string `json:"text"`
}

// payload is the section's body after its name: JSON.
type payload struct {
	Format int    `json:"format"`
	Files  []File `json:"files"`
}

// Skill is one checked skill.
type Skill struct {
	// Name is the skill's name: its directory, and its front matter's name.
	Name string
	// Frontmatter is the SKILL.md YAML front matter as JSON values
	// (map[string]any, []any, string, bool, int, float64, nil).
	Frontmatter map[string]any
	// Description is the front matter's description.
	Description string
	// Files are its files, SKILL.md first, then by path.
	Files []SkillFile
}

// SkillFile is one file of a skill.
type SkillFile struct {
	// Path is relative to the skill's root ("SKILL.md", "references/A.md").
	Path string
	Text string
	// Digest is "sha256:" and the lowercase hex SHA-256 of Text's bytes.
	Digest   string
	MIMEType string
}

// Size is the file's length in bytes.
func (f SkillFile) Size() int { return len(f.Text) }

// Encode returns the section payload holding files, sorted by path: the
// same files give the same bytes. It checks them as Parse does.
func Encode(files []File) ([]byte, error) {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	data, err := json.Marshal(payload{Format: Format, Files: files})
	if err != nil {
		return nil, fmt.Errorf("encode the skills: %w", err)
	}
	if _, err := Parse(data); err != nil {
		return nil, err
	}
	return data, nil
}

// Pack reads a skills directory (one subdirectory per skill) and returns
// its section payload. Names beginning with "." (.git, .DS_Store) are
// skipped; a symbolic link or any other non-regular file is an error, as is
// anything Parse refuses.
func Pack(dir string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("skills directory: %w", err)
	}
	defer root.Close()
	var files []File
	total := 0
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s: not a regular file (symbolic links and special files are not packed)", filepath.Join(dir, p))
		case !strings.Contains(p, "/"):
			return fmt.Errorf("%s: a file outside any skill (each skill is a directory holding a %s)", filepath.Join(dir, p), ManifestName)
		}
		f, err := root.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, p), err)
		}
		if len(b) > MaxFileBytes {
			return fmt.Errorf("%s: more than %d bytes (a skill's file may hold at most that)", filepath.Join(dir, p), MaxFileBytes)
		}
		if !utf8.Valid(b) {
			return fmt.Errorf("%s: not UTF-8 text (a skill's files are text)", filepath.Join(dir, p))
		}
		if total += len(b); total > MaxSectionBytes {
			return fmt.Errorf("%s: the skills hold more than %d bytes", dir, MaxSectionBytes)
		}
		files = append(files, File{Path: p, Text: string(b)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no skill", dir)
	}
	data, err := Encode(files)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return data, nil
}

// Parse decodes and checks a section payload; the error names the skill
// and the file at fault. The skills come sorted by name.
func Parse(data []byte) ([]*Skill, error) {
	if len(data) > MaxSectionBytes {
		return nil, fmt.Errorf("the skills are %d bytes, more than a module may carry (%d)", len(data), MaxSectionBytes)
	}
	var version struct {
		Format int `json:"format"`
	}
	if err := json.Unmarshal(data, &version); err != nil {
		return nil, fmt.Errorf("decode the skills: %w", err)
	}
	if version.Format != Format {
		return nil, fmt.Errorf("skills written in format %d; this mcphost reads format %d", version.Format, Format)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p payload
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("decode the skills: %w", err)
	}
	if dec.More() {
		return nil, errors.New("decode the skills: data after their end")
	}
	bySkill := map[string][]File{}
	seen := map[string]bool{}
	for _, f := range p.Files {
		if err := checkPath(f.Path); err != nil {
			return nil, fmt.Errorf("file %s: %w", bridge.ShowName(f.Path), err)
		}
		if seen[f.Path] {
			return nil, fmt.Errorf("file %q is there twice", f.Path)
		}
		seen[f.Path] = true
		skill, rest, _ := strings.Cut(f.Path, "/")
		bySkill[skill] = append(bySkill[skill], File{Path: rest, Text: f.Text})
	}
	// A path may not be a file and a directory at once (a/b and a/b/c).
	for p := range seen {
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if seen[dir] {
				return nil, fmt.Errorf("%q is a file and a directory (%q is in it)", dir, p)
			}
		}
	}
	if len(bySkill) == 0 {
		return nil, errors.New("the section holds no skill")
	}
	if len(bySkill) > MaxSkills {
		return nil, fmt.Errorf("%d skills, more than a plugin may ship (%d)", len(bySkill), MaxSkills)
	}
	var out []*Skill
	for _, name := range slices.Sorted(maps.Keys(bySkill)) {
		s, err := parseSkill(name, bySkill[name])
		if err != nil {
			return nil, fmt.Errorf("skill %q: %w", name, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// segment is what one segment of a path may be: it becomes a segment of a
// skill:// URI, so it is kept to characters a URI carries unescaped.
var segment = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)

// checkPath refuses a path that is not relative, not clean, leaves its
// directory, or has a segment a URI would have to escape.
func checkPath(p string) error {
	switch {
	case p == "":
		return errors.New("has no path")
	case len(p) > MaxPathBytes:
		return fmt.Errorf("path of %d bytes (at most %d)", len(p), MaxPathBytes)
	case strings.HasPrefix(p, "/") || strings.Contains(p, `\`) || filepath.IsAbs(p):
		return errors.New("absolute path, or one with '\\' (paths are relative, with '/')")
	}
	segs := strings.Split(p, "/")
	if len(segs) < 2 {
		return fmt.Errorf("is outside any skill (each skill is a directory holding a %s)", ManifestName)
	}
	if len(segs) > MaxDepth+1 {
		return fmt.Errorf("is %d directories deep (at most %d)", len(segs)-1, MaxDepth)
	}
	for _, s := range segs {
		switch {
		case s == "" || s == "." || s == "..":
			return fmt.Errorf("path segment %q (a path may not be empty, '.' or '..')", s)
		case !segment.MatchString(s):
			return fmt.Errorf("path segment %s: names are letters, digits, '.', '_' and '-', not starting with '.' or '-'", bridge.ShowName(s))
		}
	}
	return nil
}

// name is the Agent Skills specification's rule for a skill's name: 1-64
// lowercase letters, digits and hyphens, no leading, trailing or doubled
// hyphen.
var name = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`)

// ValidName reports whether s may name a skill (Agent Skills).
func ValidName(s string) bool { return name.MatchString(s) && !strings.Contains(s, "--") }

// parseSkill checks the files of the skill in directory dir (paths relative
// to it).
func parseSkill(dir string, files []File) (*Skill, error) {
	if !ValidName(dir) {
		return nil, errors.New("the directory's name is no skill name (Agent Skills: 1-64 lowercase letters, digits and hyphens, no leading, trailing or doubled hyphen)")
	}
	if len(files) > MaxFilesPerSkill {
		return nil, fmt.Errorf("%d files, more than a skill may hold (%d, SEP-2640)", len(files), MaxFilesPerSkill)
	}
	s := &Skill{Name: dir}
	var manifest *File
	for i := range files {
		f := &files[i]
		if len(f.Text) > MaxFileBytes {
			return nil, fmt.Errorf("file %q: %d bytes, more than a skill's file may hold (%d)", f.Path, len(f.Text), MaxFileBytes)
		}
		if err := bridge.VisibleText(f.Text); err != nil {
			return nil, fmt.Errorf("file %q: its text %w", f.Path, err)
		}
		if f.Path == ManifestName {
			manifest = f
		}
	}
	if manifest == nil {
		return nil, fmt.Errorf("no %s at its root", ManifestName)
	}
	fm, err := ParseFrontmatter(manifest.Text)
	if err != nil {
		return nil, fmt.Errorf("file %s: %w", ManifestName, err)
	}
	if err := checkFrontmatter(dir, fm); err != nil {
		return nil, fmt.Errorf("file %s: front matter: %w", ManifestName, err)
	}
	s.Frontmatter = fm
	s.Description = fm["description"].(string)
	slices.SortFunc(files, func(a, b File) int {
		switch {
		case a.Path == ManifestName:
			return -1
		case b.Path == ManifestName:
			return 1
		}
		return strings.Compare(a.Path, b.Path)
	})
	for _, f := range files {
		sum := sha256.Sum256([]byte(f.Text))
		s.Files = append(s.Files, SkillFile{Path: f.Path, Text: f.Text, Digest: "sha256:" + hex.EncodeToString(sum[:]), MIMEType: MIMEType(f.Path)})
	}
	return s, nil
}

// ParseFrontmatter returns the YAML front matter a SKILL.md begins with
// (between a first line "---" and the next line "---"), as JSON values.
// Only what JSON can carry is accepted: mappings with string keys,
// sequences, strings, booleans, finite numbers and null.
func ParseFrontmatter(text string) (map[string]any, error) {
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		if rest, ok = strings.CutPrefix(text, "---\r\n"); !ok {
			return nil, errors.New("does not begin with YAML front matter (a first line \"---\")")
		}
	}
	end := -1
	for off := 0; off < len(rest); {
		line, _, _ := strings.Cut(rest[off:], "\n")
		if strings.TrimRight(line, " \t\r") == "---" {
			end = off
			break
		}
		off += len(line) + 1
	}
	if end < 0 {
		return nil, errors.New("its YAML front matter has no end (a line \"---\")")
	}
	src := rest[:end]
	if len(src) > MaxFrontmatterBytes {
		return nil, fmt.Errorf("front matter of %d bytes (at most %d)", len(src), MaxFrontmatterBytes)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		return nil, fmt.Errorf("front matter is not YAML: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("front matter is not a YAML mapping")
	}
	v, err := jsonValue(doc.Content[0], "")
	if err != nil {
		return nil, fmt.Errorf("front matter: %w", err)
	}
	return v.(map[string]any), nil
}

// jsonValue returns the YAML node n as a JSON value, or an error naming
// where (at, a dotted path) it is none. A timestamp stays the string it is
// written as (as YAML 1.2's core schema reads it); anchors and aliases,
// merge keys, binary values and keys that are not strings are refused.
func jsonValue(n *yaml.Node, at string) (any, error) {
	where := func() string {
		if at == "" {
			return "the document"
		}
		return at
	}
	switch n.Kind {
	case yaml.AliasNode:
		return nil, fmt.Errorf("%s: an alias (*%s); anchors and aliases are not read in front matter", where(), n.Value)
	case yaml.ScalarNode:
		if n.Anchor != "" {
			return nil, fmt.Errorf("%s: an anchor (&%s); anchors and aliases are not read in front matter", where(), n.Anchor)
		}
		switch n.ShortTag() {
		case "!!str", "!!timestamp":
			return n.Value, nil
		case "!!null":
			return nil, nil
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				return nil, fmt.Errorf("%s: %w", where(), err)
			}
			return b, nil
		case "!!int":
			var i int64
			if err := n.Decode(&i); err != nil {
				return nil, fmt.Errorf("%s: %w", where(), err)
			}
			return i, nil
		case "!!float":
			var f float64
			if err := n.Decode(&f); err != nil {
				return nil, fmt.Errorf("%s: %w", where(), err)
			}
			if math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, fmt.Errorf("%s: %s is no JSON number", where(), n.Value)
			}
			return f, nil
		default:
			return nil, fmt.Errorf("%s: a YAML value tagged %s, which JSON cannot carry (quote it)", where(), n.ShortTag())
		}
	case yaml.SequenceNode:
		if n.Anchor != "" {
			return nil, fmt.Errorf("%s: an anchor (&%s); anchors and aliases are not read in front matter", where(), n.Anchor)
		}
		out := make([]any, len(n.Content))
		for i, e := range n.Content {
			var err error
			if out[i], err = jsonValue(e, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return nil, err
			}
		}
		return out, nil
	case yaml.MappingNode:
		if n.Anchor != "" {
			return nil, fmt.Errorf("%s: an anchor (&%s); anchors and aliases are not read in front matter", where(), n.Anchor)
		}
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, e := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
				return nil, fmt.Errorf("%s: a key that is not a string (%s)", where(), k.ShortTag())
			}
			if _, dup := out[k.Value]; dup {
				return nil, fmt.Errorf("%s: the key %q is there twice", where(), k.Value)
			}
			key := k.Value
			if at != "" {
				key = at + "." + k.Value
			}
			var err error
			if out[k.Value], err = jsonValue(e, key); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: not a YAML value", where())
}

// reservedMetadata is the prefix of metadata keys SEP-2640 reserves for
// MCP extensions (none defined yet).
const reservedMetadata = "io.modelcontextprotocol/"

// checkFrontmatter checks the fields the Agent Skills specification
// defines; other fields pass through.
func checkFrontmatter(dir string, fm map[string]any) error {
	// str checks the string field key: required or not, of 1 to maxRunes
	// characters (0: any number but none).
	str := func(key string, required bool, maxRunes int) (string, error) {
		v, ok := fm[key]
		if !ok {
			if required {
				return "", fmt.Errorf("no %s (required)", key)
			}
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("%s is not a string", key)
		}
		switch n := utf8.RuneCountInString(s); {
		case n == 0:
			return "", fmt.Errorf("%s is empty", key)
		case maxRunes > 0 && n > maxRunes:
			return "", fmt.Errorf("%s of %d characters (at most %d)", key, n, maxRunes)
		}
		return s, nil
	}
	n, err := str("name", true, 64)
	if err != nil {
		return err
	}
	if !ValidName(n) {
		return fmt.Errorf("name %q: 1-64 lowercase letters, digits and hyphens, no leading, trailing or doubled hyphen (Agent Skills)", n)
	}
	if n != dir {
		return fmt.Errorf("name %q differs from its directory %q (Agent Skills: they are equal)", n, dir)
	}
	if _, err := str("description", true, 1024); err != nil {
		return err
	}
	if _, err := str("compatibility", false, 500); err != nil {
		return err
	}
	if _, err := str("license", false, 0); err != nil {
		return err
	}
	if _, err := str("allowed-tools", false, 0); err != nil {
		return fmt.Errorf("%w (Agent Skills: space-separated tool names)", err)
	}
	if v, ok := fm["metadata"]; ok {
		m, ok := v.(map[string]any)
		if !ok {
			return errors.New("metadata is not a mapping")
		}
		for k, e := range m {
			if _, ok := e.(string); !ok {
				return fmt.Errorf("metadata.%s is not a string (Agent Skills: metadata maps strings to strings; quote it)", k)
			}
			if strings.HasPrefix(k, reservedMetadata) {
				return fmt.Errorf("metadata key %q: the prefix %s is reserved for MCP extensions (SEP-2640)", k, reservedMetadata)
			}
		}
	}
	return nil
}

// mimeTypes are the MIME types of a skill's files by extension (all are
// text); a fixed table, so that what a host serves does not depend on the
// machine's.
var mimeTypes = map[string]string{
	".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain",
	".json": "application/json", ".yaml": "application/yaml", ".yml": "application/yaml",
	".toml": "application/toml", ".csv": "text/csv", ".html": "text/html", ".xml": "application/xml",
	".py": "text/x-python", ".sh": "text/x-shellscript", ".js": "text/javascript",
	".ts": "text/x-typescript", ".go": "text/x-go", ".sql": "application/sql",
}

// MIMEType returns the MIME type a skill's file is served with:
// text/markdown for SKILL.md, by extension otherwise, text/plain when the
// extension is not known.
func MIMEType(p string) string {
	if t, ok := mimeTypes[strings.ToLower(path.Ext(p))]; ok {
		return t
	}
	return "text/plain"
}

// Find returns the payload of the module's skills section; found is false
// when it has none. A module with two, one over MaxSectionBytes, or whose
// sections cannot be split, is an error.
func Find(wasm []byte) (data []byte, found bool, err error) {
	if err := wasmbin.CheckMagic(wasm); err != nil {
		return nil, false, err
	}
	r := &wasmbin.Reader{B: wasm, Pos: len(wasmbin.Header)}
	for !r.Done() {
		s, err := r.Section()
		if err != nil {
			return nil, false, fmt.Errorf("read the module's sections: %w", err)
		}
		body, ok := skillsBody(s)
		if !ok {
			continue
		}
		if found {
			return nil, false, fmt.Errorf("the module has two %s sections", SectionName)
		}
		if len(body) > MaxSectionBytes {
			return nil, false, fmt.Errorf("its %s section is %d bytes, more than a module may carry (%d)", SectionName, len(body), MaxSectionBytes)
		}
		data, found = body, true
	}
	return data, found, nil
}

// skillsBody returns the payload of s when it is a skills section.
func skillsBody(s wasmbin.Section) ([]byte, bool) {
	if s.ID != 0 {
		return nil, false
	}
	r := &wasmbin.Reader{B: s.Body}
	n := r.Name()
	if r.Err != nil || string(n) != SectionName {
		return nil, false
	}
	return s.Body[r.Pos:], true
}

// Embed returns a copy of the module with data (a payload of Encode or
// Pack) as its skills: a skills section it had is dropped, and the new one
// is appended after every other section. Nil data only drops it.
func Embed(wasm, data []byte) ([]byte, error) {
	if len(data) > MaxSectionBytes {
		return nil, fmt.Errorf("the skills are %d bytes, more than a module may carry (%d)", len(data), MaxSectionBytes)
	}
	if err := wasmbin.CheckMagic(wasm); err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(wasm)+len(data)+32)
	r := &wasmbin.Reader{B: wasm, Pos: len(wasmbin.Header)}
	out = append(out, wasm[:r.Pos]...)
	for !r.Done() {
		start := r.Pos
		s, err := r.Section()
		if err != nil {
			return nil, fmt.Errorf("read the module's sections: %w", err)
		}
		if _, ok := skillsBody(s); !ok {
			out = append(out, wasm[start:r.Pos]...)
		}
	}
	if data == nil {
		return out, nil
	}
	body := wasmbin.AppendName(make([]byte, 0, len(SectionName)+len(data)+8), SectionName)
	body = append(body, data...)
	return wasmbin.AppendSection(out, 0, body), nil
}

// FindInFile is Find for the module file at path, reading only the
// sections' headers and the skills section, seeking over the others (a
// host serving a plugin from its cached description does not read the
// module).
func FindInFile(path string) (data []byte, found bool, err error) {
	f, err := regularfile.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	head := make([]byte, len(wasmbin.Header))
	if _, err := io.ReadFull(f, head); err != nil || wasmbin.CheckMagic(head) != nil {
		return nil, false, wasmbin.ErrNotWasm
	}
	pos, size := int64(len(head)), st.Size()
	for pos < size {
		// A section's id, size and (custom) name take at most 1+5+5+len
		// bytes: read that much, no more.
		r := bufio.NewReaderSize(io.NewSectionReader(f, pos, min(size-pos, 16+int64(len(SectionName)))), 16+len(SectionName))
		id, _ := r.ReadByte()
		n, idLen, err := readU32Counted(r)
		if err != nil {
			return nil, false, fmt.Errorf("read the module's sections: section %d: %w", id, err)
		}
		body := pos + 1 + int64(idLen)
		end := body + int64(n)
		if end > size {
			return nil, false, fmt.Errorf("read the module's sections: section %d is cut short", id)
		}
		if id == 0 {
			nameLen, nl, err := readU32Counted(r)
			if err == nil && nameLen == uint32(len(SectionName)) && int64(nl)+int64(nameLen) <= int64(n) {
				name := make([]byte, nameLen)
				if _, err := io.ReadFull(r, name); err == nil && string(name) == SectionName {
					if found {
						return nil, false, fmt.Errorf("the module has two %s sections", SectionName)
					}
					start := body + int64(nl) + int64(nameLen)
					if end-start > MaxSectionBytes {
						return nil, false, fmt.Errorf("its %s section is %d bytes, more than a module may carry (%d)", SectionName, end-start, MaxSectionBytes)
					}
					data = make([]byte, end-start)
					if _, err := f.ReadAt(data, start); err != nil {
						return nil, false, fmt.Errorf("read the module's %s section: %w", SectionName, err)
					}
					found = true
				}
			}
		}
		pos = end
	}
	return data, found, nil
}

// readU32Counted reads an unsigned LEB128 number of at most 32 bits, and
// returns how many bytes it read.
func readU32Counted(r io.ByteReader) (uint32, int, error) {
	var v uint32
	for i := range 5 {
		b, err := r.ReadByte()
		if err != nil {
			return 0, i, io.ErrUnexpectedEOF
		}
		v |= uint32(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			if i == 4 && b > 0x0f {
				return 0, i + 1, errors.New("number over 32 bits")
			}
			return v, i + 1, nil
		}
	}
	return 0, 5, errors.New("number over 32 bits")
}
