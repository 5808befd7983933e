//go:build !linux

package host

import (
	"os"
	"time"
)

// lastUse is when the file was last written: elsewhere than on Linux the
// access time is not read, so an entry in use for longer than
// compiledMaxAge is compiled again once.
func lastUse(info os.FileInfo) time.Time { return info.ModTime() }
