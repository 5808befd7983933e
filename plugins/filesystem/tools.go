package main

import (
	"github.com/mcphost/mcphost/plugins/internal/utf8lossy"

	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"syscall"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk"
)

// readTextFile is read_text_file (and the deprecated read_file).
func readTextFile(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Path string   `json:"path"`
		Tail *float64 `json:"tail"`
		Head *float64 `json:"head"`
	}
	if err := decode(args, &in); err != nil {
		return nil, err
	}
	p, err := validatePath(ctx, in.Path)
	if err != nil {
		return nil, err
	}
	head, tail := 0.0, 0.0
	if in.Head != nil {
		head = *in.Head
	}
	if in.Tail != nil {
		tail = *in.Tail
	}
	if head != 0 && tail != 0 {
		return nil, errors.New("Cannot specify both head and tail parameters simultaneously")
	}
	var content string
	switch {
	case tail != 0:
		content, err = tailFile(p, tail)
	case head != 0:
		content, err = headFile(p, head)
	default:
		content, err = readFileContent(p)
	}
	if err != nil {
		return nil, err
	}
	return textResult(content), nil
}

// readFileBytes is fs.readFile: the whole file, Node's errors.
func readFileBytes(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, nodeError("open", p, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, nodeError("read", "", syscall.EISDIR)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, nodeError("read", "", err)
	}
	return b, nil
}

// readFileContent is fs.readFile(p, "utf-8").
func readFileContent(p string) (string, error) {
	b, err := readFileBytes(p)
	if err != nil {
		return "", err
	}
	return utf8lossy.Decode(b), nil
}

// normalizeLineEndings turns CRLF into LF.
func normalizeLineEndings(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// jsSliceStart is the start index of Array.prototype.slice(start) on n items.
func jsSliceStart(start float64, n int) int {
	s := math.Trunc(start)
	if s < 0 {
		return int(math.Max(float64(n)+s, 0))
	}
	return int(math.Min(s, float64(n)))
}

// tailFile is the reference's tailFile: the last n lines, read backwards
// in 1 KiB chunks.
func tailFile(p string, n float64) (string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return "", nodeError("stat", p, err)
	}
	if fi.Size() == 0 {
		return "", nil
	}
	f, err := os.Open(p)
	if err != nil {
		return "", nodeError("open", p, err)
	}
	defer f.Close()
	var data []byte
	pos := fi.Size()
	newlines := 0.0
	chunk := make([]byte, 1024)
	for pos > 0 && newlines < n {
		size := min(int64(1024), pos)
		pos -= size
		got, err := f.ReadAt(chunk[:size], pos)
		if err != nil && !errors.Is(err, io.EOF) {
			if isErrno(err, syscall.EISDIR) || fi.IsDir() {
				return "", nodeError("read", "", syscall.EISDIR)
			}
			return "", nodeError("read", "", err)
		}
		if got == 0 {
			break
		}
		data = append(append([]byte{}, chunk[:got]...), data...)
		for _, c := range chunk[:got] {
			if c == '\n' {
				newlines++
			}
		}
	}
	lines := strings.Split(normalizeLineEndings(utf8lossy.Decode(data)), "\n")
	return strings.Join(lines[jsSliceStart(-n, len(lines)):], "\n"), nil
}

// headFile is the reference's headFile: the first n lines, read forwards
// in 1 KiB chunks.
func headFile(p string, n float64) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", nodeError("open", p, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return "", nodeError("read", "", syscall.EISDIR)
	}
	var lines []string
	buffer := ""
	var pending []byte // an incomplete UTF-8 sequence held back (StringDecoder)
	chunk := make([]byte, 1024)
	for float64(len(lines)) < n {
		got, err := f.Read(chunk)
		if got == 0 || err != nil && !errors.Is(err, io.EOF) {
			break
		}
		data := append(pending, chunk[:got]...)
		cut := completeUTF8(data)
		buffer += utf8lossy.Decode(data[:cut])
		pending = append([]byte{}, data[cut:]...)
		if i := strings.LastIndex(buffer, "\n"); i >= 0 {
			complete := strings.Split(buffer[:i], "\n")
			buffer = buffer[i+1:]
			for _, l := range complete {
				lines = append(lines, l)
				if float64(len(lines)) >= n {
					break
				}
			}
		}
	}
	buffer += utf8lossy.Decode(pending)
	if buffer != "" && float64(len(lines)) < n {
		lines = append(lines, buffer)
	}
	return strings.Join(lines, "\n"), nil
}

// completeUTF8 is how much of b a streaming decoder can decode now: all
// but a trailing sequence that may still be completed.
func completeUTF8(b []byte) int {
	for back := 1; back <= 3 && back <= len(b); back++ {
		c := b[len(b)-back]
		if c < 0x80 {
			return len(b)
		}
		if c >= 0xc0 { // a lead byte: complete if it needs no more bytes
			need := 1
			switch {
			case c >= 0xf0:
				need = 3
			case c >= 0xe0:
				need = 2
			}
			if back-1 < need && utf8lossy.MaximalSubpart(b[len(b)-back:]) == back {
				return len(b) - back
			}
			return len(b)
		}
	}
	return len(b)
}

// mimeTypes are the reference's.
var mimeTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".bmp": "image/bmp", ".svg": "image/svg+xml",
	".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg", ".flac": "audio/flac",
}

// readMediaFile is read_media_file.
func readMediaFile(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Path string `json:"path"`
	}
	if err := decode(args, &in); err != nil {
		return nil, err
	}
	p, err := validatePath(ctx, in.Path)
	if err != nil {
		return nil, err
	}
	mimeType, ok := mimeTypes[strings.ToLower(jsExtname(p))]
	if !ok {
		mimeType = "application/octet-stream"
	}
	b, err := readFileBytes(p)
	if err != nil {
		return nil, err
	}
	data := base64.StdEncoding.EncodeToString(b)
	var item abi.Content
	var structured map[string]any
	switch {
	case strings.HasPrefix(mimeType, "image/"), strings.HasPrefix(mimeType, "audio/"):
		kind := "image"
		if strings.HasPrefix(mimeType, "audio/") {
			kind = "audio"
		}
		item = abi.Content{Type: kind, Data: b, MimeType: mimeType}
		structured = map[string]any{"type": kind, "data": data, "mimeType": mimeType}
	default:
		uri := fileURL(p)
		item = sdk.EmbeddedBlob(uri, mimeType, b)
		structured = map[string]any{"type": "resource", "resource": map[string]any{"uri": uri, "mimeType": mimeType, "blob": data}}
	}
	return &abi.CallToolResult{
		Content:           []abi.Content{item},
		StructuredContent: map[string]any{"content": []any{structured}},
	}, nil
}

// readMultipleFiles is read_multiple_files.
func readMultipleFiles(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Paths []string `json:"paths"`
	}
	if err := decode(args, &in); err != nil {
		return nil, err
	}
	var results []string
	for _, fp := range in.Paths {
		p, err := validatePath(ctx, fp)
		var content string
		if err == nil {
			content, err = readFileContent(p)
		}
		if err != nil {
			results = append(results, fp+": Error - "+err.Error())
			continue
		}
		results = append(results, fp+":\n"+content+"\n")
	}
	return textResult(strings.Join(results, "\n---\n")), nil
}

// writeFile is write_file.
func writeFile(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := decode(args, &in); err != nil {
		return nil, err
	}
	p, err := validatePath(ctx, in.Path)
	if err != nil {
		return nil, err
	}
	if !isWritable(p) {
		return nil, readOnlyError("open", p)
	}
	if err := writeFileContent(p, in.Content); err != nil {
		return nil, err
	}
	return textResult("Successfully wrote to " + in.Path), nil
}

// writeFileContent creates p exclusively, or, when it exists, rewrites it
// in place. The reference writes a temporary file and renames it over p,
// then restores p's permission bits; WASI cannot set permission bits, so
// replacing the file would lose them (a script its execute bit): the file
// is truncated and written instead (what a crash mid-write leaves differs).
func writeFileContent(p, content string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil && !isErrno(err, syscall.EEXIST) {
		return nodeError("open", p, err)
	}
	if err != nil {
		fi, err := os.Stat(p)
		if err != nil {
			return nodeError("stat", p, err)
		}
		if fi.IsDir() { // the reference's rename of its temporary file fails so
			return nodeError2("rename", tempName(p), p, syscall.EISDIR)
		}
		if f, err = os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0); err != nil {
			return nodeError("open", p, err)
		}
	}
	if _, err := io.WriteString(f, content); err != nil {
		f.Close()
		return nodeError("write", "", err)
	}
	if err := f.Close(); err != nil {
		return nodeError("close", "", err)
	}
	return nil
}

// tempName is a name as the reference gives its temporary files.
func tempName(p string) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return p + "." + hex.EncodeToString(b) + ".tmp"
}

// edit is one edit of edit_file.
type edit struct {
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

// editFile is edit_file.
func editFile(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Path   string `json:"path"`
		Edits  []edit `json:"edits"`
		DryRun bool   `json:"dryRun"`
	}
	if err := decode(args, &in); err != nil {
		return nil, err
	}
	p, err := validatePath(ctx, in.Path)
	if err != nil {
		return nil, err
	}
	out, err := applyFileEdits(p, in.Edits, in.DryRun)
	if err != nil {
		return nil, err
	}
	return textResult(out), nil
}

// applyFileEdits is the reference's applyFileEdits: each edit replaces the
// first exact match, else the first run of lines equal but for leading and
// trailing white space (keeping the file's indentation); the answer is the
// diff in a fenced block.
func applyFileEdits(p string, edits []edit, dryRun bool) (string, error) {
	raw, err := readFileContent(p)
	if err != nil {
		return "", err
	}
	content := normalizeLineEndings(raw)
	modified := content
	for _, e := range edits {
		oldText, newText := normalizeLineEndings(e.OldText), normalizeLineEndings(e.NewText)
		if strings.Contains(modified, oldText) {
			modified = strings.Replace(modified, oldText, newText, 1)
			continue
		}
		oldLines := strings.Split(oldText, "\n")
		contentLines := strings.Split(modified, "\n")
		found := false
		for i := 0; i <= len(contentLines)-len(oldLines); i++ {
			match := true
			for j, ol := range oldLines {
				if jsTrim(ol) != jsTrim(contentLines[i+j]) {
					match = false
					break
				}
			}
			if !match {
				continue
			}
			indent := leadingSpace(contentLines[i])
			newLines := strings.Split(newText, "\n")
			for j, line := range newLines {
				if j == 0 {
					newLines[j] = indent + jsTrimStart(line)
					continue
				}
				oldIndent := ""
				if j < len(oldLines) {
					oldIndent = leadingSpace(oldLines[j])
				}
				newIndent := leadingSpace(line)
				if oldIndent != "" && newIndent != "" {
					rel := jsLen(newIndent) - jsLen(oldIndent)
					newLines[j] = indent + strings.Repeat(" ", max(0, rel)) + jsTrimStart(line)
				}
			}
			contentLines = append(contentLines[:i], append(newLines, contentLines[i+len(oldLines):]...)...)
			modified = strings.Join(contentLines, "\n")
			found = true
			break
		}
		if !found {
			return "", fmt.Errorf("Could not find exact match for edit:\n%s", e.OldText)
		}
	}
	diff := createTwoFilesPatch(p, content, modified, "original", "modified")
	ticks := 3
	for strings.Contains(diff, strings.Repeat("`", ticks)) {
		ticks++
	}
	fence := strings.Repeat("`", ticks)
	formatted := fence + "diff\n" + diff + fence + "\n\n"
	if !dryRun {
		if !isWritable(p) {
			return "", readOnlyError("open", tempName(p))
		}
		if _, err := os.Stat(p); err != nil {
			return "", nodeError("stat", p, err)
		}
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return "", nodeError("open", p, err)
		}
		if _, err := io.WriteString(f, modified); err != nil {
			f.Close()
			return "", nodeError("write", "", err)
		}
		if err := f.Close(); err != nil {
			return "", nodeError("close", "", err)
		}
	}
	return formatted, nil
}

// createDirectory is create_directory.
func createDirectory(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Path string `json:"path"`
	}
	if err := decode(args, &in); err != nil {
		return nil, err
	}
	p, err := validatePath(ctx, in.Path)
	if err != nil {
		return nil, err
	}
	if err := mkdirAll(p); err != nil {
		return nil, err
	}
	return textResult("Successfully created directory " + in.Path), nil
}

// mkdirAll is fs.mkdir(p, {recursive: true}) with Node's errors: an
// existing directory is fine, an existing file is EEXIST, a file on the
// way ENOTDIR, each naming p.
func mkdirAll(p string) error {
	fi, err := os.Stat(p)
	if err == nil {
		if fi.IsDir() {
			return nil
		}
		return nodeError("mkdir", p, syscall.EEXIST)
	}
	if !isWritable(p) {
		return readOnlyError("mkdir", p)
	}
	var missing []string
	dir := p
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return nodeError("mkdir", p, syscall.ENOTDIR)
			}
			break
		}
		if !isErrno(err, syscall.ENOENT) {
			return nodeError("mkdir", p, err)
		}
		missing = append(missing, dir)
		parent := jsDirname(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o777); err != nil && !isErrno(err, syscall.EEXIST) {
			return nodeError("mkdir", p, err)
		}
	}
	return nil
}

// dirEntry is an entry as Node's readdir withFileTypes gives it.
type dirEntry struct {
	name  string
	isDir bool
}

// readDir lists dir sorted by name, with Node's errors.
func readDir(dir string) ([]dirEntry, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, nodeError("scandir", dir, err)
	}
	if !fi.IsDir() {
		return nil, nodeError("scandir", dir, syscall.ENOTDIR)
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil, nodeError("scandir", dir, err)
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, nodeError("scandir", dir, err)
	}
	// Node's readdir (libuv's scandir) sorts the names byte by byte.
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	out := make([]dirEntry, 0, len(entries))
	for _, e := range entries {
		out = append(out, dirEntry{name: e.Name(), isDir: e.IsDir()})
	}
	return out, nil
}

// kind is "[DIR]" or "[FILE]".
func kind(isDir bool) string {
	if isDir {
		return "[DIR]"
	}
	return "[FILE]"
}

// listDirectory is list_directory.
func listDirectory(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Path string `json:"path"`
	}
	if err := decode(args, &in); err != nil {
		return nil, err
	}
	p, err := validatePath(ctx, in.Path)
	if err != nil {
		return nil, err
	}
	entries, err := readDir(p)
	if err != nil {
		return nil, err
	}
	lines := make([]string, 0, len(entries))
	for _, e := range entries {
		lines = append(lines, kind(e.isDir)+" "+e.name)
	}
	return textResult(strings.Join(lines, "\n")), nil
}

// collator compares names as String.prototype.localeCompare does in Node
// (ICU, CLDR root order).
var collator = collate.New(language.Und)

// listDirectoryWithSizes is list_directory_with_sizes.
func listDirectoryWithSizes(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Path   string `json:"path"`
		SortBy string `json:"sortBy"`
	}
	if err := decode(args, &in); err != nil {
		return nil, err
	}
	p, err := validatePath(ctx, in.Path)
	if err != nil {
		return nil, err
	}
	entries, err := readDir(p)
	if err != nil {
		return nil, err
	}
	type sized struct {
		dirEntry
		size int64
	}
	detailed := make([]sized, 0, len(entries))
	for _, e := range entries {
		var size int64
		if real, err := realpath(jsJoin(p, e.name)); err == nil && isPathWithinAllowedDirectories(real, preopens()) {
			if fi, err := os.Stat(real); err == nil {
				size = fi.Size()
			}
		}
		detailed = append(detailed, sized{e, size})
	}
	sorted := append([]sized{}, detailed...)
	if in.SortBy == "size" {
		sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].size > sorted[j].size })
	} else {
		sort.SliceStable(sorted, func(i, j int) bool { return collator.CompareString(sorted[i].name, sorted[j].name) < 0 })
	}
	var lines []string
	var files, dirs int
	var total int64
	for _, e := range sorted {
		size := ""
		if !e.isDir {
			size = padStart(formatSize(e.size), 10)
		}
		lines = append(lines, kind(e.isDir)+" "+padEnd(e.name, 30)+" "+size)
	}
	for _, e := range detailed {
		if e.isDir {
			dirs++
		} else {
			files++
			total += e.size
		}
	}
	lines = append(lines, "", fmt.Sprintf("Total: %d files, %d directories", files, dirs), "Combined size: "+formatSize(total))
	return textResult(strings.Join(lines, "\n")), nil
}

// treeEntry is one entry of directory_tree.
type treeEntry struct {
	name     string
	isDir    bool
	children []treeEntry
}

// directoryTree is directory_tree.
func directoryTree(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Path            string   `json:"path"`
		ExcludePatterns []string `json:"excludePatterns"`
	}
	if err := decode(args, &in); err != nil {
		return nil, err
	}
	root := in.Path
	var build func(current string) ([]treeEntry, error)
	build = func(current string) ([]treeEntry, error) {
		p, err := validatePath(ctx, current)
		if err != nil {
			return nil, err
		}
		entries, err := readDir(p)
		if err != nil {
			return nil, err
		}
		result := []treeEntry{}
		for _, e := range entries {
			rel := jsRelative(root, jsJoin(current, e.name))
			excluded := false
			for _, pat := range in.ExcludePatterns {
				if strings.Contains(pat, "*") {
					excluded = globMatch(rel, pat)
				} else {
					excluded = globMatch(rel, pat) || globMatch(rel, "**/"+pat) || globMatch(rel, "**/"+pat+"/**")
				}
				if excluded {
					break
				}
			}
			if excluded {
				continue
			}
			entry := treeEntry{name: e.name, isDir: e.isDir}
			if e.isDir {
				if entry.children, err = build(jsJoin(current, e.name)); err != nil {
					return nil, err
				}
			}
			result = append(result, entry)
		}
		return result, nil
	}
	tree, err := build(root)
	if err != nil {
		return nil, err
	}
	var sb strings.Builder
	writeTree(&sb, tree, "")
	return textResult(sb.String()), nil
}

// writeTree is JSON.stringify(tree, null, 2).
func writeTree(sb *strings.Builder, entries []treeEntry, indent string) {
	if len(entries) == 0 {
		sb.WriteString("[]")
		return
	}
	in := indent + "  "
	sb.WriteString("[\n")
	for i, e := range entries {
		typ := "file"
		if e.isDir {
			typ = "directory"
		}
		sb.WriteString(in + "{\n" + in + `  "name": ` + jsonQuote(e.name) + ",\n" + in + `  "type": ` + jsonQuote(typ))
		if e.isDir {
			sb.WriteString(",\n" + in + `  "children": `)
			writeTree(sb, e.children, in+"  ")
		}
		sb.WriteString("\n" + in + "}")
		if i < len(entries)-1 {
			sb.WriteString(",")
		}
		sb.WriteString("\n")
	}
	sb.WriteString(indent + "]")
}

// moveFileTool is move_file.
func moveFileTool(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Source      string `json:"source"`
		Destination string `json:"destination"`
	}
	if err := decode(args, &in); err != nil {
		return nil, err
	}
	src, err := validatePath(ctx, in.Source)
	if err != nil {
		return nil, err
	}
	dst, err := validatePath(ctx, in.Destination)
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(dst); err == nil {
		return nil, fmt.Errorf("Destination already exists: %s", dst)
	} else if !isErrno(err, syscall.ENOENT) {
		return nil, nodeError("lstat", dst, err)
	}
	if !isWritable(src) || !isWritable(dst) {
		return nil, nodeError2("rename", src, dst, syscall.EROFS)
	}
	if grantOf(src) != grantOf(dst) { // two mounts: WASI cannot rename across them
		return nil, nodeError2("rename", src, dst, syscall.EXDEV)
	}
	if err := os.Rename(src, dst); err != nil {
		return nil, nodeError2("rename", src, dst, err)
	}
	return textResult("Successfully moved " + in.Source + " to " + in.Destination), nil
}

// searchFiles is search_files.
func searchFiles(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Path            string   `json:"path"`
		Pattern         string   `json:"pattern"`
		ExcludePatterns []string `json:"excludePatterns"`
	}
	if err := decode(args, &in); err != nil {
		return nil, err
	}
	root, err := validatePath(ctx, in.Path)
	if err != nil {
		return nil, err
	}
	var results []string
	var search func(current string) error
	search = func(current string) error {
		entries, err := readDir(current)
		if err != nil {
			return err
		}
		for _, e := range entries {
			full := jsJoin(current, e.name)
			if _, err := validatePath(ctx, full); err != nil {
				continue
			}
			rel := jsRelative(root, full)
			excluded := false
			for _, pat := range in.ExcludePatterns {
				if globMatch(rel, pat) {
					excluded = true
					break
				}
			}
			if excluded {
				continue
			}
			if globMatch(rel, in.Pattern) {
				results = append(results, full)
			}
			if e.isDir {
				_ = search(full) // a failure below is skipped, as the reference's
			}
		}
		return nil
	}
	if err := search(root); err != nil {
		return nil, err
	}
	if len(results) == 0 {
		return textResult("No matches found"), nil
	}
	return textResult(strings.Join(results, "\n")), nil
}

// getFileInfo is get_file_info.
func getFileInfo(ctx *sdk.Context, args json.RawMessage) (*abi.CallToolResult, error) {
	var in struct {
		Path string `json:"path"`
	}
	if err := decode(args, &in); err != nil {
		return nil, err
	}
	p, err := validatePath(ctx, in.Path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return nil, nodeError("stat", p, err)
	}
	atime, ctime := statTimes(fi.Sys())
	text := strings.Join([]string{
		fmt.Sprintf("size: %d", fi.Size()),
		"created: " + jsDate(ctime),
		"modified: " + jsDate(fi.ModTime()),
		"accessed: " + jsDate(atime),
		fmt.Sprintf("isDirectory: %t", fi.IsDir()),
		fmt.Sprintf("isFile: %t", fi.Mode().IsRegular()),
		fmt.Sprintf("permissions: %03o", fi.Mode().Perm()),
	}, "\n")
	return textResult(text), nil
}

// listAllowedDirectories is list_allowed_directories.
func listAllowedDirectories(ctx *sdk.Context, _ json.RawMessage) (*abi.CallToolResult, error) {
	dirs, err := allowedDirectories(ctx)
	if err != nil {
		return nil, err
	}
	return textResult("Allowed directories:\n" + strings.Join(dirs, "\n")), nil
}
