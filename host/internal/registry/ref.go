// Package registry fetches plugins from OCI registries and https:// URLs
// into a local content-addressed store, and publishes them.
//
// A plugin's remote source is a reference: oci://REGISTRY/REPO:TAG,
// oci://REGISTRY/REPO@sha256:HEX, or https://HOST/PATH (which needs the
// config's sha256). What is fetched is verified against its digest before
// it is written, atomically, to the store; the host loads plugins only from
// the store. The registry protocol is oras-go's (RATIONALE.md).
package registry

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"oras.land/oras-go/v2/registry"
)

// Schemes of a remote plugin source.
const (
	SchemeOCI   = "oci"
	SchemeHTTPS = "https"
)

// Ref is a parsed remote plugin source.
type Ref struct {
	// Scheme is SchemeOCI or SchemeHTTPS.
	Scheme string
	// Raw is the reference as written.
	Raw string
	// Registry is the registry's host[:port] (oci).
	Registry string
	// Repository is the repository within the registry (oci).
	Repository string
	// Tag is the tag, or "" when the reference names a digest (oci).
	Tag string
	// Digest is "sha256:HEX" when the reference names one (oci).
	Digest string
	// URL is the address of the file (https).
	URL string
}

// IsRemote reports whether path is a remote source (oci:// or a URL) rather
// than a local file.
func IsRemote(path string) bool {
	return strings.HasPrefix(path, "oci://") || strings.HasPrefix(path, "https://") || strings.HasPrefix(path, "http://")
}

// ParseRef parses an oci:// or https:// reference.
func ParseRef(s string) (Ref, error) {
	switch {
	case strings.HasPrefix(s, "oci://"):
		rest := strings.TrimPrefix(s, "oci://")
		r, err := registry.ParseReference(rest)
		if err != nil {
			return Ref{}, fmt.Errorf("%q is not an OCI reference (expected oci://REGISTRY/REPO:TAG or oci://REGISTRY/REPO@sha256:HEX): %w", s, err)
		}
		if r.Reference == "" {
			return Ref{}, fmt.Errorf("%q names no tag or digest (expected oci://REGISTRY/REPO:TAG or oci://REGISTRY/REPO@sha256:HEX)", s)
		}
		ref := Ref{Scheme: SchemeOCI, Raw: s, Registry: r.Registry, Repository: r.Repository}
		if d, err := r.Digest(); err == nil {
			if d.Algorithm() != "sha256" {
				return Ref{}, fmt.Errorf("%q: digest algorithm %q is not supported (sha256 only)", s, d.Algorithm())
			}
			ref.Digest = d.String()
		} else {
			ref.Tag = r.Reference
		}
		return ref, nil
	case strings.HasPrefix(s, "https://"):
		u, err := url.Parse(s)
		if err != nil || u.Host == "" || u.User != nil {
			return Ref{}, fmt.Errorf("%q is not an https:// URL of a file", s)
		}
		return Ref{Scheme: SchemeHTTPS, Raw: s, URL: s}, nil
	case strings.HasPrefix(s, "http://"):
		return Ref{}, fmt.Errorf("%q: plain http:// is not accepted (use https://, or oci:// with insecure = true for a registry on loopback)", s)
	}
	return Ref{}, fmt.Errorf("%q is not a remote reference (oci:// or https://)", s)
}

// Repo returns REGISTRY/REPO of an oci reference.
func (r Ref) Repo() string { return r.Registry + "/" + r.Repository }

// String returns the reference as written.
func (r Ref) String() string { return r.Raw }

// Loopback reports whether the reference's registry is on this machine
// (localhost, 127.0.0.0/8 or ::1): the only registries spoken to over
// plain HTTP, with insecure = true.
func (r Ref) Loopback() bool {
	host := r.Registry
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
