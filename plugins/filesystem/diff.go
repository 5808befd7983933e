package main

import (
	"strconv"
	"strings"
)

// This file ports what the reference uses of jsdiff 8 (createTwoFilesPatch
// with its defaults: diffLines, four lines of context, all headers), step
// for step, so that the diff of edit_file is the same text, hunk for hunk.

// component is one run of jsdiff's edit script.
type component struct {
	count          int
	added, removed bool
	prev           *component
	value          []string // the run's lines
}

// diffPath is jsdiff's path: how far it went in the old tokens.
type diffPath struct {
	oldPos int
	last   *component
}

// tokenizeLines is jsdiff's line tokenizer: each line with its newline.
func tokenizeLines(s string) []string {
	var parts []string // lines and separators, as value.split(/(\n|\r\n)/)
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			parts = append(parts, s)
			break
		}
		if i > 0 && s[i-1] == '\r' {
			parts = append(parts, s[:i-1], "\r\n")
		} else {
			parts = append(parts, s[:i], "\n")
		}
		s = s[i+1:]
	}
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	var lines []string
	for i, p := range parts {
		if i%2 == 1 {
			lines[len(lines)-1] += p
		} else {
			lines = append(lines, p)
		}
	}
	// removeEmpty
	out := lines[:0]
	for _, l := range lines {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// diffLines is jsdiff's diffLines: Myers' algorithm as jsdiff runs it.
func diffLines(oldStr, newStr string) []*component {
	oldT, newT := tokenizeLines(oldStr), tokenizeLines(newStr)
	newLen, oldLen := len(newT), len(oldT)
	maxEdit := newLen + oldLen
	best := map[int]*diffPath{0: {oldPos: -1}}
	extract := func(p *diffPath, diagonal int) int {
		oldPos := p.oldPos
		newPos := oldPos - diagonal
		common := 0
		for newPos+1 < newLen && oldPos+1 < oldLen && oldT[oldPos+1] == newT[newPos+1] {
			newPos++
			oldPos++
			common++
		}
		if common > 0 {
			p.last = &component{count: common, prev: p.last}
		}
		p.oldPos = oldPos
		return newPos
	}
	addTo := func(p *diffPath, added, removed bool, inc int) *diffPath {
		last := p.last
		if last != nil && last.added == added && last.removed == removed {
			return &diffPath{oldPos: p.oldPos + inc, last: &component{count: last.count + 1, added: added, removed: removed, prev: last.prev}}
		}
		return &diffPath{oldPos: p.oldPos + inc, last: &component{count: 1, added: added, removed: removed, prev: last}}
	}
	newPos := extract(best[0], 0)
	if best[0].oldPos+1 >= oldLen && newPos+1 >= newLen {
		return buildValues(best[0].last, newT, oldT)
	}
	const inf = int(^uint(0) >> 1)
	minD, maxD := -inf, inf
	for editLength := 1; editLength <= maxEdit; editLength++ {
		for d := max(minD, -editLength); d <= min(maxD, editLength); d += 2 {
			removePath, addPath := best[d-1], best[d+1]
			if removePath != nil {
				delete(best, d-1)
			}
			canAdd := false
			if addPath != nil {
				addNew := addPath.oldPos - d
				canAdd = 0 <= addNew && addNew < newLen
			}
			canRemove := removePath != nil && removePath.oldPos+1 < oldLen
			if !canAdd && !canRemove {
				delete(best, d)
				continue
			}
			var base *diffPath
			if !canRemove || (canAdd && removePath.oldPos < addPath.oldPos) {
				base = addTo(addPath, true, false, 0)
			} else {
				base = addTo(removePath, false, true, 1)
			}
			newPos = extract(base, d)
			if base.oldPos+1 >= oldLen && newPos+1 >= newLen {
				return buildValues(base.last, newT, oldT)
			}
			best[d] = base
			if base.oldPos+1 >= oldLen {
				maxD = min(maxD, d-1)
			}
			if newPos+1 >= newLen {
				minD = max(minD, d+1)
			}
		}
	}
	return nil // not reached: the edit length is bounded by maxEdit
}

// buildValues is jsdiff's buildValues: the runs in order, with their lines.
func buildValues(last *component, newT, oldT []string) []*component {
	var comps []*component
	for c := last; c != nil; c = c.prev {
		comps = append(comps, c)
	}
	for i, j := 0, len(comps)-1; i < j; i, j = i+1, j-1 {
		comps[i], comps[j] = comps[j], comps[i]
	}
	newPos, oldPos := 0, 0
	for _, c := range comps {
		if !c.removed {
			c.value = newT[newPos : newPos+c.count]
			newPos += c.count
			if !c.added {
				oldPos += c.count
			}
		} else {
			c.value = oldT[oldPos : oldPos+c.count]
			oldPos += c.count
		}
	}
	return comps
}

// hunk is one hunk of a unified diff.
type hunk struct {
	oldStart, oldLines, newStart, newLines int
	lines                                  []string
}

// createTwoFilesPatch is jsdiff's createTwoFilesPatch(name, name, old, new,
// oldHeader, newHeader) with its default context of 4 lines.
func createTwoFilesPatch(name, oldStr, newStr, oldHeader, newHeader string) string {
	const context = 4
	diff := diffLines(oldStr, newStr)
	diff = append(diff, &component{}) // the empty run jsdiff appends
	var hunks []hunk
	oldRangeStart, newRangeStart, oldLine, newLine := 0, 0, 1, 1
	var cur []string
	for i, c := range diff {
		lines := c.value
		if c.added || c.removed {
			if oldRangeStart == 0 {
				oldRangeStart, newRangeStart = oldLine, newLine
				if i > 0 {
					prev := diff[i-1].value
					cur = nil
					for _, l := range prev[max(0, len(prev)-context):] {
						cur = append(cur, " "+l)
					}
					oldRangeStart -= len(cur)
					newRangeStart -= len(cur)
				}
			}
			sign := "-"
			if c.added {
				sign = "+"
			}
			for _, l := range lines {
				cur = append(cur, sign+l)
			}
			if c.added {
				newLine += len(lines)
			} else {
				oldLine += len(lines)
			}
			continue
		}
		if oldRangeStart != 0 {
			if len(lines) <= context*2 && i < len(diff)-2 {
				for _, l := range lines {
					cur = append(cur, " "+l)
				}
			} else {
				n := min(len(lines), context)
				for _, l := range lines[:n] {
					cur = append(cur, " "+l)
				}
				hunks = append(hunks, hunk{
					oldStart: oldRangeStart, oldLines: oldLine - oldRangeStart + n,
					newStart: newRangeStart, newLines: newLine - newRangeStart + n,
					lines: cur,
				})
				oldRangeStart, newRangeStart, cur = 0, 0, nil
			}
		}
		oldLine += len(lines)
		newLine += len(lines)
	}
	var out []string
	out = append(out, "Index: "+name,
		"===================================================================",
		"--- "+name+"\t"+oldHeader,
		"+++ "+name+"\t"+newHeader)
	for _, h := range hunks {
		if h.oldLines == 0 {
			h.oldStart--
		}
		if h.newLines == 0 {
			h.newStart--
		}
		out = append(out, "@@ -"+strconv.Itoa(h.oldStart)+","+strconv.Itoa(h.oldLines)+" +"+strconv.Itoa(h.newStart)+","+strconv.Itoa(h.newLines)+" @@")
		for _, l := range h.lines {
			if strings.HasSuffix(l, "\n") {
				out = append(out, l[:len(l)-1])
			} else {
				out = append(out, l, `\ No newline at end of file`)
			}
		}
	}
	return strings.Join(out, "\n") + "\n"
}
