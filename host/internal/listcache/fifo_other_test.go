//go:build !unix

package listcache

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs here") }
