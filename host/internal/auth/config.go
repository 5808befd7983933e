package auth

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Defaults applied by [New] to a [Config] that leaves a value unset.
const (
	// DefaultClockSkew is the leeway allowed on exp, nbf and iat.
	DefaultClockSkew = 30 * time.Second
	// MaxClockSkew is the largest clock_skew Validate accepts.
	MaxClockSkew = 5 * time.Minute
	// DefaultJWKSCacheTTL is how long fetched keys are used before the
	// key set is fetched again.
	DefaultJWKSCacheTTL = time.Hour
	// DefaultJWKSMinRefresh is the least time between two fetches of the
	// key set, whatever triggers them (expiry or a token with an unknown
	// key id).
	DefaultJWKSMinRefresh = 30 * time.Second
)

// DefaultAlgorithms returns the JWS algorithms accepted when the config
// does not list any: the asymmetric ones. "none" and the HMAC algorithms
// (HS256 and friends) are never accepted: the host holds only public keys,
// and a public key used as an HMAC secret is the classic
// algorithm-confusion forgery.
func DefaultAlgorithms() []string {
	return []string{
		string(jose.RS256), string(jose.RS384), string(jose.RS512),
		string(jose.PS256), string(jose.PS384), string(jose.PS512),
		string(jose.ES256), string(jose.ES384), string(jose.ES512),
		string(jose.EdDSA),
	}
}

// Duration is a time.Duration written in TOML as a string such as "30s" or
// "5m". A bare number is refused, so "30" cannot silently mean 30ns.
type Duration time.Duration

// UnmarshalText parses a duration string with time.ParseDuration.
func (d *Duration) UnmarshalText(text []byte) error {
	v, err := time.ParseDuration(string(text))
	if err != nil {
		return fmt.Errorf("%q is not a duration (expected e.g. \"30s\", \"5m\")", text)
	}
	*d = Duration(v)
	return nil
}

// MarshalText formats the duration as time.Duration.String does.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(time.Duration(d).String()), nil
}

// Config is the [server.auth] table: the host as an OAuth 2.1 resource
// server (MCP authorization, RFC 9728 metadata, RFC 6750 bearer tokens).
type Config struct {
	// Issuer is the authorization server's issuer identifier; a token's
	// iss claim must equal it exactly. Required.
	Issuer string `toml:"issuer"`
	// Audience is this server's canonical URL (the MCP endpoint, e.g.
	// "https://mcp.example.com/mcp"); a token's aud claim must contain it,
	// so tokens issued for another resource are refused. It is also the
	// resource in the Protected Resource Metadata. Required.
	Audience string `toml:"audience"`
	// JWKSURL is where the issuer publishes its signing keys (JWKS).
	// Exactly one of JWKSURL and KeyFile is required.
	JWKSURL string `toml:"jwks_url"`
	// KeyFile is a local file holding the verification key(s): PEM public
	// keys or certificates, or a JWKS / single JWK in JSON. For tests and
	// offline set-ups; it is read once, at start. A relative path is taken
	// as it is: the config loader should resolve it against the config
	// file's directory.
	KeyFile string `toml:"key_file"`
	// Scopes must all be granted to a token for any access.
	Scopes []string `toml:"scopes"`
	// Algorithms narrows the accepted JWS algorithms (default:
	// DefaultAlgorithms()). "none" and HS* are refused.
	Algorithms []string `toml:"algorithms"`
	// ClockSkew is the leeway on exp, nbf and iat (default 30s, at most 5m).
	ClockSkew Duration `toml:"clock_skew"`
	// JWKSCacheTTL is how long fetched keys are used before the key set is
	// fetched again (default 1h). If that fetch fails, the old keys stay in
	// use and the failure is logged.
	JWKSCacheTTL Duration `toml:"jwks_cache_ttl"`
	// JWKSMinRefresh is the least time between two fetches of the key set
	// (default 30s). A token with an unknown key id triggers a fetch (the
	// issuer may have rotated its keys), but no more often than this, so
	// junk tokens cannot make the host hammer the issuer.
	JWKSMinRefresh Duration `toml:"jwks_min_refresh"`
	// ResourceName is the human-readable name in the Protected Resource
	// Metadata (resource_name).
	ResourceName string `toml:"resource_name"`
	// ResourceDocumentation is a URL of developer documentation for the
	// Protected Resource Metadata (resource_documentation).
	ResourceDocumentation string `toml:"resource_documentation"`
	// AuthorizationServers lists the authorization servers' issuer
	// identifiers in the Protected Resource Metadata (default: [Issuer]).
	AuthorizationServers []string `toml:"authorization_servers"`
	// ScopesSupported lists the scopes in the Protected Resource Metadata
	// (default: Scopes). List per-tool scopes here too so clients can ask
	// for them up front.
	ScopesSupported []string `toml:"scopes_supported"`
	// ResourceMetadataURL overrides where clients are told to fetch the
	// metadata (the resource_metadata parameter of WWW-Authenticate). The
	// default is derived from Audience per RFC 9728 §3.1:
	// scheme://host/.well-known/oauth-protected-resource/<audience path>.
	ResourceMetadataURL string `toml:"resource_metadata_url"`
}

// TOMLKeys returns the keys [server.auth] accepts, for a strict decoder's
// list of known keys.
func TOMLKeys() []string {
	return []string{
		"issuer", "audience", "jwks_url", "key_file", "scopes", "algorithms",
		"clock_skew", "jwks_cache_ttl", "jwks_min_refresh", "resource_name",
		"resource_documentation", "authorization_servers", "scopes_supported",
		"resource_metadata_url",
	}
}

// Enabled reports whether the table configures authorization at all: any
// of issuer, audience, jwks_url or key_file set. An enabled Config must
// then pass Validate.
func (c Config) Enabled() bool {
	return c.Issuer != "" || c.Audience != "" || c.JWKSURL != "" || c.KeyFile != ""
}

// Validate checks the config and returns every problem found, each naming
// its key under [server.auth]. It also reads and parses KeyFile.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("server.auth."+format, args...))
	}
	if c.Issuer == "" {
		bad("issuer: required (the authorization server's issuer identifier, e.g. \"https://auth.example.com\")")
	} else if err := checkIdentifier(c.Issuer); err != nil {
		bad("issuer: %q %v", c.Issuer, err)
	}
	if c.Audience == "" {
		bad("audience: required (this server's canonical URL, e.g. \"https://mcp.example.com/mcp\")")
	} else if err := checkIdentifier(c.Audience); err != nil {
		bad("audience: %q %v", c.Audience, err)
	}
	switch {
	case c.JWKSURL == "" && c.KeyFile == "":
		bad("jwks_url: one of jwks_url and key_file is required")
	case c.JWKSURL != "" && c.KeyFile != "":
		bad("jwks_url: set only one of jwks_url and key_file")
	case c.JWKSURL != "":
		if err := checkURL(c.JWKSURL, true); err != nil {
			bad("jwks_url: %q %v", c.JWKSURL, err)
		}
	default:
		if _, err := loadKeyFile(c.KeyFile); err != nil {
			bad("key_file: %v", err)
		}
	}
	for _, list := range []struct {
		key    string
		scopes []string
	}{{"scopes", c.Scopes}, {"scopes_supported", c.ScopesSupported}} {
		for _, s := range list.scopes {
			if !validScope(s) {
				bad("%s: %q is not a scope token (printable ASCII without spaces, '\"' or '\\')", list.key, s)
			}
		}
	}
	for _, a := range c.Algorithms {
		if !slices.Contains(DefaultAlgorithms(), a) {
			bad("algorithms: %q is not accepted (choose from %s; \"none\" and HS* are never accepted)", a, strings.Join(DefaultAlgorithms(), ", "))
		}
	}
	if d := time.Duration(c.ClockSkew); d < 0 || d > MaxClockSkew {
		bad("clock_skew: %s is out of range (0 to %s)", d, MaxClockSkew)
	}
	if d := time.Duration(c.JWKSCacheTTL); d < 0 {
		bad("jwks_cache_ttl: %s must not be negative", d)
	}
	if d := time.Duration(c.JWKSMinRefresh); d < 0 {
		bad("jwks_min_refresh: %s must not be negative", d)
	}
	if c.JWKSCacheTTL > 0 && c.JWKSMinRefresh > c.JWKSCacheTTL {
		bad("jwks_min_refresh: %s is longer than jwks_cache_ttl (%s)", time.Duration(c.JWKSMinRefresh), time.Duration(c.JWKSCacheTTL))
	}
	for i, as := range c.AuthorizationServers {
		if err := checkURL(as, false); err != nil {
			bad("authorization_servers[%d]: %q %v", i, as, err)
		}
	}
	if c.ResourceDocumentation != "" {
		if err := checkURL(c.ResourceDocumentation, false); err != nil {
			bad("resource_documentation: %q %v", c.ResourceDocumentation, err)
		}
	}
	if c.ResourceMetadataURL != "" {
		if err := checkURL(c.ResourceMetadataURL, false); err != nil {
			bad("resource_metadata_url: %q %v", c.ResourceMetadataURL, err)
		}
	}
	return errors.Join(errs...)
}

// withDefaults returns c with unset optional values filled in.
func (c Config) withDefaults() Config {
	if c.ClockSkew == 0 {
		c.ClockSkew = Duration(DefaultClockSkew)
	}
	if c.JWKSCacheTTL == 0 {
		c.JWKSCacheTTL = Duration(DefaultJWKSCacheTTL)
	}
	if c.JWKSMinRefresh == 0 {
		c.JWKSMinRefresh = Duration(DefaultJWKSMinRefresh)
	}
	if len(c.Algorithms) == 0 {
		c.Algorithms = DefaultAlgorithms()
	}
	if len(c.AuthorizationServers) == 0 {
		c.AuthorizationServers = []string{c.Issuer}
	}
	if len(c.ScopesSupported) == 0 {
		c.ScopesSupported = slices.Clone(c.Scopes)
	}
	return c
}

// checkURL checks that s is an absolute https URL without a fragment; http
// is accepted only for a loopback host. fetched marks a URL the host will
// fetch (as opposed to an identifier).
func checkURL(s string, fetched bool) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("is not a URL: %w", err)
	}
	if u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return errors.New("must be an absolute https URL")
	}
	if u.Fragment != "" || strings.Contains(s, "#") {
		return errors.New("must not have a fragment")
	}
	if u.User != nil {
		return errors.New("must not carry credentials")
	}
	if u.Scheme == "http" && !isLoopbackHost(u.Hostname()) {
		if fetched {
			return errors.New("must use https (http only for a loopback host): keys fetched in clear can be replaced in transit")
		}
		return errors.New("must use https (http only for a loopback host)")
	}
	return nil
}

// checkIdentifier checks an issuer or resource identifier: a URL as
// checkURL wants, without a query (RFC 8414 §2, RFC 8707 §2).
func checkIdentifier(s string) error {
	if err := checkURL(s, false); err != nil {
		return err
	}
	if strings.Contains(s, "?") {
		return errors.New("must not have a query")
	}
	return nil
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// validScope reports whether s is a scope-token (RFC 6749 §3.3), which is
// also safe inside a quoted WWW-Authenticate parameter.
func validScope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b < 0x21 || b > 0x7e || b == '"' || b == '\\' {
			return false
		}
	}
	return true
}
