package jsbundle

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// maxPositionsBytes bounds the position table appended to a bundle: past
// it, only the first position of each generated line is kept.
const maxPositionsBytes = 1 << 20

// positionsKey is the symbol (Symbol.for) under which the engine's prelude
// finds the table; a symbol, so that no plugin global is taken.
const positionsKey = "mcphost.positions"

// positions is the table the prelude reads: for each line of the bundle
// (0-based), a flat list of segments, four numbers each: the column in the
// bundle, the index of the source in sources, and the line and column in
// that source (all 0-based).
type positions struct {
	Sources []string  `json:"sources"`
	Lines   [][]int32 `json:"lines"`
}

// WithPositions returns the bundle with a first line that defines, for
// the engine's prelude, where each line of the bundle comes from in the
// sources (decoded from the source map): a stack trace's
// plugin.js:LINE:COLUMN then names the file, line and column the author
// wrote. First, it is defined before any of the plugin's code runs, so an
// error thrown while the module is evaluated is placed too; the table
// counts that line (its entry is empty).
func (r *Result) WithPositions() ([]byte, error) {
	if len(r.SourceMap) == 0 {
		return r.JS, nil
	}
	var m struct {
		Version  int      `json:"version"`
		Sources  []string `json:"sources"`
		Mappings string   `json:"mappings"`
	}
	if err := json.Unmarshal(r.SourceMap, &m); err != nil {
		return nil, fmt.Errorf("read the source map: %w", err)
	}
	if m.Version != 3 {
		return nil, fmt.Errorf("source map version %d, not 3", m.Version)
	}
	lines, err := decodeMappings(m.Mappings, len(m.Sources))
	if err != nil {
		return nil, fmt.Errorf("read the source map: %w", err)
	}
	lines = append([][]int32{nil}, lines...) // the table's own line
	table, err := json.Marshal(positions{Sources: m.Sources, Lines: lines})
	if err != nil {
		return nil, err
	}
	if len(table) > maxPositionsBytes {
		for i, l := range lines {
			if len(l) > 4 {
				lines[i] = l[:4]
			}
		}
		if table, err = json.Marshal(positions{Sources: m.Sources, Lines: lines}); err != nil {
			return nil, err
		}
	}
	var b strings.Builder
	b.Grow(len(r.JS) + len(table) + 100)
	fmt.Fprintf(&b, "Object.defineProperty(globalThis, Symbol.for(%q), { value: %s });\n", positionsKey, table)
	b.Write(r.JS)
	return []byte(b.String()), nil
}

// decodeMappings decodes a source map's "mappings" (Base64 VLQ) into the
// segments of each generated line that name a source position.
func decodeMappings(mappings string, nSources int) ([][]int32, error) {
	var lines [][]int32
	var line []int32
	var genCol, src, srcLine, srcCol int32
	for _, group := range strings.Split(mappings, ";") {
		genCol = 0
		line = nil
		for _, seg := range strings.Split(group, ",") {
			if seg == "" {
				continue
			}
			fields, err := decodeVLQ(seg)
			if err != nil {
				return nil, err
			}
			if len(fields) != 1 && len(fields) != 4 && len(fields) != 5 {
				return nil, fmt.Errorf("a segment of %d fields", len(fields))
			}
			genCol += fields[0]
			if len(fields) == 1 {
				continue
			}
			src, srcLine, srcCol = src+fields[1], srcLine+fields[2], srcCol+fields[3]
			if src < 0 || int(src) >= nSources || srcLine < 0 || srcCol < 0 || genCol < 0 {
				return nil, errors.New("a segment out of range")
			}
			line = append(line, genCol, src, srcLine, srcCol)
		}
		if line == nil {
			line = []int32{}
		}
		lines = append(lines, line)
	}
	return lines, nil
}

const base64Digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// decodeVLQ decodes one segment's Base64 VLQ numbers.
func decodeVLQ(s string) ([]int32, error) {
	var out []int32
	var value, shift int64
	for i := 0; i < len(s); i++ {
		d := strings.IndexByte(base64Digits, s[i])
		if d < 0 {
			return nil, fmt.Errorf("%q is not Base64", s[i])
		}
		value |= int64(d&31) << shift
		if d&32 != 0 {
			if shift += 5; shift > 30 {
				return nil, errors.New("a number too large")
			}
			continue
		}
		n := value >> 1
		if value&1 != 0 {
			n = -n
		}
		out = append(out, int32(n))
		value, shift = 0, 0
	}
	if shift != 0 {
		return nil, errors.New("a number cut short")
	}
	return out, nil
}
