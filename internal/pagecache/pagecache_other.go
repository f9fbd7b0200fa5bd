//go:build !linux

// Package pagecache tells which of a file's pages the kernel holds in its
// page cache, and drops them (Linux only).
package pagecache

import "errors"

// Resident: not on this platform.
func Resident(string) (int, error) { return 0, errors.ErrUnsupported }

// Evict: not on this platform.
func Evict(string) error { return errors.ErrUnsupported }
