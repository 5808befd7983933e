package host

import (
	"errors"
	"fmt"
	"io"

	"github.com/mcphost/mcphost/host/internal/interrupt"
	"github.com/mcphost/mcphost/internal/regularfile"
)

// ReadModuleFile reads a plugin's module from path. It opens only a
// regular file, without blocking (a FIFO or a device in place of a plugin
// file would hold the load forever, /dev/zero would fill the memory), and
// refuses a file larger than the module limit before reading it.
func ReadModuleFile(path string) ([]byte, error) {
	f, err := regularfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	limit := int64(interrupt.DefaultModuleLimits.ModuleBytes)
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: module of %d bytes, over the limit of %d (module bytes)", path, fi.Size(), limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: module over the limit of %d bytes (module bytes); it grew while read", path, limit)
	}
	return b, nil
}

// CheckModule checks wasm against the module limits every plugin is held
// to, and returns it without its custom sections (names and debug
// information, which wazero decodes trusting their counts), ready for a
// tool that hands it to wazero itself. The error names the limit.
func CheckModule(wasm []byte) ([]byte, error) {
	if _, err := interrupt.CheckLimits(wasm, interrupt.DefaultModuleLimits); err != nil {
		if le := (*interrupt.LimitError)(nil); errors.As(err, &le) {
			return nil, fmt.Errorf("module refused before compiling: %w", err)
		}
		return nil, fmt.Errorf("not a valid WebAssembly module: %w", err)
	}
	return interrupt.StripCustomSections(wasm)
}
