package auth

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/hashicorp/go-hclog"
)

const (
	// maxJWKSBytes bounds a fetched key set.
	maxJWKSBytes = 1 << 20
	// maxKeys bounds the usable keys kept from one key set, which bounds
	// the signature checks a token without a key id can cost.
	maxKeys = 64
	// minRSABits is the smallest RSA modulus accepted.
	minRSABits = 2048
	// fetchTimeout bounds one fetch of the key set.
	fetchTimeout = 10 * time.Second
)

// errKeysUnavailable marks a failure to get keys at all (the issuer's key
// set could not be fetched): the token may be fine, so the answer is 503,
// not 401.
var errKeysUnavailable = errors.New("signing keys unavailable")

// keySource yields the keys that may have signed a token.
type keySource interface {
	// candidates returns the usable keys matching kid (any key when kid is
	// "", or when the source has keys without ids) and alg. An empty result
	// with a nil error means no key matches. An error wrapping
	// errKeysUnavailable means keys could not be had.
	candidates(ctx context.Context, kid string, alg jose.SignatureAlgorithm) ([]jose.JSONWebKey, error)
}

// matchKeys picks from keys those that can verify alg and carry kid. Keys
// without a kid match any kid only when the set has no key ids at all (a
// static PEM key).
func matchKeys(keys []jose.JSONWebKey, kid string, alg jose.SignatureAlgorithm) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, k := range keys {
		if kid != "" && k.KeyID != "" && k.KeyID != kid {
			continue
		}
		if kid != "" && k.KeyID == "" && hasKeyIDs(keys) {
			continue
		}
		if k.Algorithm != "" && k.Algorithm != string(alg) {
			continue
		}
		if !keyFitsAlg(k.Key, alg) {
			continue
		}
		out = append(out, k)
	}
	return out
}

func hasKeyIDs(keys []jose.JSONWebKey) bool {
	for _, k := range keys {
		if k.KeyID != "" {
			return true
		}
	}
	return false
}

// keyFitsAlg reports whether the public key is of the type (and, for EC,
// the curve) alg needs.
func keyFitsAlg(key any, alg jose.SignatureAlgorithm) bool {
	switch k := key.(type) {
	case *rsa.PublicKey:
		switch alg {
		case jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512:
			return true
		}
	case *ecdsa.PublicKey:
		switch alg {
		case jose.ES256:
			return k.Curve == elliptic.P256()
		case jose.ES384:
			return k.Curve == elliptic.P384()
		case jose.ES512:
			return k.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return alg == jose.EdDSA
	}
	return false
}

// usableKeys keeps the public signature keys of a key set: no symmetric
// keys, no encryption keys, no weak RSA keys. A private key is an error:
// whoever published it has leaked it.
func usableKeys(set []jose.JSONWebKey) ([]jose.JSONWebKey, error) {
	var out []jose.JSONWebKey
	for _, k := range set {
		switch k.Key.(type) {
		case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
			return nil, fmt.Errorf("key %q is a private key; the host needs (and should see) only public keys", k.KeyID)
		}
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		switch pk := k.Key.(type) {
		case *rsa.PublicKey:
			if pk.N.BitLen() < minRSABits {
				continue
			}
		case *ecdsa.PublicKey, ed25519.PublicKey:
		default:
			continue // symmetric, or a type no accepted algorithm uses
		}
		out = append(out, k)
		if len(out) == maxKeys {
			break
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no usable signature key (RSA of at least 2048 bits, EC P-256/384/521 or Ed25519, use \"sig\")")
	}
	return out, nil
}

// parseJWKS parses a key set document, or a single JWK. A key that does
// not parse (e.g. of a type go-jose does not know) is skipped rather than
// failing the whole set, so an issuer adding an exotic key does not lock
// everyone out.
func parseJWKS(data []byte) ([]jose.JSONWebKey, error) {
	var doc struct {
		Keys *[]json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse JWKS: %w", err)
	}
	raws := []json.RawMessage{data}
	if doc.Keys != nil {
		raws = *doc.Keys
	}
	var keys []jose.JSONWebKey
	var skipped error
	for i, raw := range raws {
		var k jose.JSONWebKey
		if err := json.Unmarshal(raw, &k); err != nil {
			if skipped == nil && !errors.Is(err, jose.ErrUnsupportedKeyType) {
				skipped = fmt.Errorf("key %d: %w", i, err)
			}
			continue
		}
		keys = append(keys, k)
	}
	usable, err := usableKeys(keys)
	if err != nil && skipped != nil {
		return nil, fmt.Errorf("%w (skipped %w)", err, skipped)
	}
	return usable, err
}

// loadKeyFile reads PEM public keys or certificates, or a JWKS / JWK.
func loadKeyFile(path string) ([]jose.JSONWebKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read key file: %w", err)
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		keys, err := parseJWKS(t)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return keys, nil
	}
	var keys []jose.JSONWebKey
	rest := data
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		var pub any
		switch block.Type {
		case "PUBLIC KEY":
			pub, err = x509.ParsePKIXPublicKey(block.Bytes)
		case "RSA PUBLIC KEY":
			pub, err = x509.ParsePKCS1PublicKey(block.Bytes)
		case "CERTIFICATE":
			var cert *x509.Certificate
			cert, err = x509.ParseCertificate(block.Bytes)
			if err == nil {
				pub = cert.PublicKey
			}
		default:
			if strings.Contains(block.Type, "PRIVATE KEY") {
				return nil, fmt.Errorf("%s holds a %s; give the public key only (e.g. openssl pkey -pubout)", path, block.Type)
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: parse %s: %w", path, block.Type, err)
		}
		keys = append(keys, jose.JSONWebKey{Key: pub, Use: "sig"})
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s holds no PEM public key, certificate or JWKS", path)
	}
	usable, err := usableKeys(keys)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return usable, nil
}

// staticKeys is a key set read once from a file.
type staticKeys []jose.JSONWebKey

func (s staticKeys) candidates(_ context.Context, kid string, alg jose.SignatureAlgorithm) ([]jose.JSONWebKey, error) {
	return matchKeys(s, kid, alg), nil
}

// remoteKeySet caches a JWKS fetched over HTTP. It has no goroutine of its
// own: a fetch runs in the goroutine of the request that needs it (others
// needing keys meanwhile wait for that fetch or their own context), bounded
// by fetchTimeout and detached from the requester's cancellation so one
// client hanging up does not fail the others.
type remoteKeySet struct {
	url        string
	client     *http.Client
	logger     hclog.Logger
	ttl        time.Duration // refetch after this
	minRefresh time.Duration // never fetch more often than this

	mu          sync.Mutex
	keys        []jose.JSONWebKey
	fetchedAt   time.Time // last successful fetch
	lastAttempt time.Time // last fetch started
	inflight    *fetchCall
}

type fetchCall struct {
	done chan struct{}
	err  error
}

// errRateLimited reports a refresh skipped because the last fetch was too
// recent.
var errRateLimited = errors.New("key set fetched too recently")

func (r *remoteKeySet) candidates(ctx context.Context, kid string, alg jose.SignatureAlgorithm) ([]jose.JSONWebKey, error) {
	r.mu.Lock()
	keys, stale := r.keys, r.keys == nil || time.Since(r.fetchedAt) >= r.ttl
	r.mu.Unlock()
	var refreshErr error
	if stale {
		if err := r.refresh(ctx); err == nil {
			keys = r.current()
		} else if !errors.Is(err, errRateLimited) {
			refreshErr = err
			if keys != nil {
				r.logger.Warn("JWKS refresh failed; using the keys fetched before", "url", r.url, "fetched_at", r.fetchedAtTime(), "error", err)
			}
		}
		if keys == nil {
			return nil, fmt.Errorf("%w: %s: %w", errKeysUnavailable, r.url, errOr(refreshErr, errRateLimited))
		}
	}
	if m := matchKeys(keys, kid, alg); len(m) > 0 {
		return m, nil
	}
	if stale {
		// Just refreshed (or just tried): nothing newer to find.
		if refreshErr != nil {
			return nil, fmt.Errorf("%w: %s: %w", errKeysUnavailable, r.url, refreshErr)
		}
		return nil, nil
	}
	// Unknown key id: the issuer may have rotated its keys.
	switch err := r.refresh(ctx); {
	case errors.Is(err, errRateLimited):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("%w: %s: %w", errKeysUnavailable, r.url, err)
	}
	return matchKeys(r.current(), kid, alg), nil
}

func errOr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

func (r *remoteKeySet) current() []jose.JSONWebKey {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.keys
}

func (r *remoteKeySet) fetchedAtTime() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fetchedAt
}

// refresh fetches the key set unless a fetch started less than minRefresh
// ago (errRateLimited); if one is in flight it waits for that one.
func (r *remoteKeySet) refresh(ctx context.Context) error {
	r.mu.Lock()
	if c := r.inflight; c != nil {
		r.mu.Unlock()
		select {
		case <-c.done:
			return c.err
		case <-ctx.Done():
			return fmt.Errorf("wait for JWKS fetch: %w", ctx.Err())
		}
	}
	if !r.lastAttempt.IsZero() && time.Since(r.lastAttempt) < r.minRefresh {
		r.mu.Unlock()
		return errRateLimited
	}
	c := &fetchCall{done: make(chan struct{})}
	r.inflight = c
	r.lastAttempt = time.Now()
	r.mu.Unlock()

	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	keys, err := r.fetch(fctx)
	cancel()

	r.mu.Lock()
	if err == nil {
		r.keys = keys
		r.fetchedAt = time.Now()
	}
	r.inflight = nil
	c.err = err
	close(c.done)
	r.mu.Unlock()
	if err == nil {
		r.logger.Debug("fetched JWKS", "url", r.url, "keys", len(keys))
	}
	return err
}

func (r *remoteKeySet) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return nil, fmt.Errorf("build JWKS request: %w", err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch JWKS: HTTP %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read JWKS: %w", err)
	}
	if len(data) > maxJWKSBytes {
		return nil, fmt.Errorf("JWKS is larger than %d bytes", maxJWKSBytes)
	}
	keys, err := parseJWKS(data)
	if err != nil {
		return nil, err
	}
	return keys, nil
}
