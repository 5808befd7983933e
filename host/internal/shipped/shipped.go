// Package shipped reads and writes the description a plugin's module
// carries: what the plugin offers (its plugin.Description, the raw output
// of its list calls), in a custom section of the .wasm file named
// SectionName, written once by `mcphost plugin describe` when the plugin is
// built or published.
//
// A description inside the module travels with it wherever the file goes
// (a copy, a container image, an OCI artifact) and is covered by whatever
// covers the file: its sha256 in the config or the lock file, a registry
// digest, a signature. A host with no cached description of the plugin
// serves its lists from it at start, without compiling the module, and
// checks it against the live plugin at the first activation like a cached
// one (package plugin, FromDescription): a description never widens what a
// plugin can do, and one that lies fails that activation.
package shipped

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcphost/mcphost/host/internal/plugin"
	"github.com/mcphost/mcphost/host/internal/wasmbin"
)

// SectionName is the name of the custom section that holds a module's
// description.
const SectionName = "mcphost.description"

// Format is the version of the section's encoding this host writes and
// reads. A section of another format is not used (the plugin is loaded
// from its module, as if it had none).
const Format = 1

// MaxBytes bounds a description: a larger section is refused when written
// and not read when found.
const MaxBytes = 4 << 20

// ErrOtherFormat is the error of a section written in a format this host
// does not read (by another mcphost version).
var ErrOtherFormat = errors.New("description written in a format this mcphost does not read")

// payload is the section's body after its name: JSON.
type payload struct {
	// Format is the encoding's version, Format.
	Format int `json:"format"`
	plugin.Description
}

// Encode returns the section body's payload for d.
func Encode(d plugin.Description) ([]byte, error) {
	data, err := json.Marshal(payload{Format: Format, Description: d})
	if err != nil {
		return nil, fmt.Errorf("encode the description: %w", err)
	}
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("the description is %d bytes, more than a module may carry (%d)", len(data), MaxBytes)
	}
	return data, nil
}

// Decode reads a payload written by Encode.
func Decode(data []byte) (plugin.Description, error) {
	if len(data) > MaxBytes {
		return plugin.Description{}, fmt.Errorf("the description is %d bytes, more than a module may carry (%d)", len(data), MaxBytes)
	}
	var version struct {
		Format int `json:"format"`
	}
	if err := json.Unmarshal(data, &version); err != nil {
		return plugin.Description{}, fmt.Errorf("decode the description: %w", err)
	}
	if version.Format != Format {
		return plugin.Description{}, fmt.Errorf("%w (format %d; this one reads %d)", ErrOtherFormat, version.Format, Format)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p payload
	if err := dec.Decode(&p); err != nil {
		return plugin.Description{}, fmt.Errorf("decode the description: %w", err)
	}
	if dec.More() {
		return plugin.Description{}, errors.New("decode the description: data after its end")
	}
	return p.Description, nil
}

// Find returns the payload of the module's description section; found is
// false when it has none. A module with two, or whose sections cannot be
// split, is an error.
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
		body, ok := descriptionBody(s)
		if !ok {
			continue
		}
		if found {
			return nil, false, fmt.Errorf("the module has two %s sections", SectionName)
		}
		data, found = body, true
	}
	return data, found, nil
}

// descriptionBody returns the payload of s when it is a description
// section.
func descriptionBody(s wasmbin.Section) ([]byte, bool) {
	if s.ID != 0 {
		return nil, false
	}
	r := &wasmbin.Reader{B: s.Body}
	name := r.Name()
	if r.Err != nil || string(name) != SectionName {
		return nil, false
	}
	return s.Body[r.Pos:], true
}

// Embed returns a copy of the module with data as its description: any
// description section it had is dropped, and the new one is appended
// after every other section (custom sections may come anywhere, and
// nothing reads this one but mcphost).
func Embed(wasm, data []byte) ([]byte, error) {
	if len(data) > MaxBytes {
		return nil, fmt.Errorf("the description is %d bytes, more than a module may carry (%d)", len(data), MaxBytes)
	}
	stripped, err := Strip(wasm)
	if err != nil {
		return nil, err
	}
	body := wasmbin.AppendName(make([]byte, 0, len(SectionName)+len(data)+8), SectionName)
	body = append(body, data...)
	return wasmbin.AppendSection(stripped, 0, body), nil
}

// Strip returns the module without its description sections (wasm itself
// when it has none).
func Strip(wasm []byte) ([]byte, error) {
	if err := wasmbin.CheckMagic(wasm); err != nil {
		return nil, err
	}
	r := &wasmbin.Reader{B: wasm, Pos: len(wasmbin.Header)}
	var out []byte
	for !r.Done() {
		start := r.Pos
		s, err := r.Section()
		if err != nil {
			return nil, fmt.Errorf("read the module's sections: %w", err)
		}
		if _, ok := descriptionBody(s); ok {
			if out == nil {
				out = append(make([]byte, 0, len(wasm)), wasm[:start]...)
			}
			continue
		}
		if out != nil {
			out = append(out, wasm[start:r.Pos]...)
		}
	}
	if out == nil {
		return wasm, nil
	}
	return out, nil
}
