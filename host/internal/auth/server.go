// Package auth makes the host an OAuth 2.1 resource server as the MCP
// authorization spec (2025-06-18, 2025-11-25) asks: it serves Protected
// Resource Metadata (RFC 9728), challenges requests without a valid bearer
// token (RFC 6750) and verifies bearer JWTs against the issuer's keys
// (JWKS, cached, refetched on rotation). Verified tokens reach go-sdk
// through its auth.RequireBearerToken middleware, so each MCP request's
// req.Extra.TokenInfo carries the caller. Tokens are only checked, never
// passed on: plugins do not see them.
package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/hashicorp/go-hclog"
	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// WellKnownPath is the RFC 9728 well-known path of Protected Resource
// Metadata; a resource with a path serves it at this path followed by its
// own path.
const WellKnownPath = "/.well-known/oauth-protected-resource"

// Options are the collaborators of a [ResourceServer].
type Options struct {
	// Logger receives key fetch results and internal errors (never tokens).
	// Nil discards.
	Logger hclog.Logger
	// HTTPClient fetches the JWKS. Nil uses a client with a 10s timeout
	// that follows redirects only to https (or loopback) URLs.
	HTTPClient *http.Client
}

// ResourceServer verifies bearer tokens for the host and answers the HTTP
// side of MCP authorization. It is safe for concurrent use. It runs no
// goroutine of its own.
type ResourceServer struct {
	cfg         Config // with defaults applied
	algs        []jose.SignatureAlgorithm
	keys        keySource
	logger      hclog.Logger
	metadataURL string
	metadata    oauthex.ProtectedResourceMetadata
	ownClient   *http.Client // closed by Close; nil if the caller gave one
}

// New checks cfg and builds a resource server. With a jwks_url it fetches
// the key set once (ctx's values carry over; the fetch is bounded by 10s,
// not by ctx's cancellation); if that fails it logs a warning and goes on
// (requests get 503 until the issuer answers), so an issuer outage does not
// stop the host from starting.
func New(ctx context.Context, cfg Config, opts Options) (*ResourceServer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("auth config: %w", err)
	}
	cfg = cfg.withDefaults()
	logger := opts.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	s := &ResourceServer{cfg: cfg, logger: logger}
	for _, a := range cfg.Algorithms {
		s.algs = append(s.algs, jose.SignatureAlgorithm(a))
	}
	metadataURL, err := resourceMetadataURL(cfg)
	if err != nil {
		return nil, err
	}
	s.metadataURL = metadataURL
	s.metadata = oauthex.ProtectedResourceMetadata{
		Resource:               cfg.Audience,
		AuthorizationServers:   slices.Clone(cfg.AuthorizationServers),
		ScopesSupported:        slices.Clone(cfg.ScopesSupported),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           cfg.ResourceName,
		ResourceDocumentation:  cfg.ResourceDocumentation,
	}
	if cfg.KeyFile != "" {
		keys, err := loadKeyFile(cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("auth key_file: %w", err)
		}
		s.keys = staticKeys(keys)
		return s, nil
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{
			Timeout: fetchTimeout,
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if len(via) >= 5 {
					return errors.New("too many redirects")
				}
				if err := checkURL(req.URL.String(), true); err != nil {
					return fmt.Errorf("redirect to %s: %w", req.URL.Redacted(), err)
				}
				return nil
			},
		}
		s.ownClient = client
	}
	rks := &remoteKeySet{
		url:        cfg.JWKSURL,
		client:     client,
		logger:     logger,
		ttl:        time.Duration(cfg.JWKSCacheTTL),
		minRefresh: time.Duration(cfg.JWKSMinRefresh),
	}
	if err := rks.refresh(ctx); err != nil {
		logger.Warn("could not fetch the issuer's keys; requests get 503 until they can be fetched", "url", cfg.JWKSURL, "error", err)
	}
	s.keys = rks
	return s, nil
}

// Close releases the idle connections of the JWKS client New made. There
// is no goroutine to stop.
func (s *ResourceServer) Close() error {
	if s.ownClient != nil {
		s.ownClient.CloseIdleConnections()
	}
	return nil
}

// resourceMetadataURL derives where the metadata is advertised: the
// configured override, else the RFC 9728 §3.1 URL for the audience.
func resourceMetadataURL(cfg Config) (string, error) {
	if cfg.ResourceMetadataURL != "" {
		return cfg.ResourceMetadataURL, nil
	}
	u, err := url.Parse(cfg.Audience)
	if err != nil {
		return "", fmt.Errorf("auth audience: %w", err)
	}
	m := url.URL{Scheme: u.Scheme, Host: u.Host, Path: WellKnownPath + strings.TrimRight(u.Path, "/")}
	return m.String(), nil
}

// ResourceMetadataURL returns the URL the WWW-Authenticate challenges
// point to (resource_metadata).
func (s *ResourceServer) ResourceMetadataURL() string { return s.metadataURL }

// Metadata returns a copy of the Protected Resource Metadata served.
func (s *ResourceServer) Metadata() *oauthex.ProtectedResourceMetadata {
	m := s.metadata
	m.AuthorizationServers = slices.Clone(m.AuthorizationServers)
	m.ScopesSupported = slices.Clone(m.ScopesSupported)
	m.BearerMethodsSupported = slices.Clone(m.BearerMethodsSupported)
	return &m
}

// MetadataPaths returns the local paths the metadata is served at: the
// root well-known path, the path-suffixed form for the audience's path
// (e.g. /.well-known/oauth-protected-resource/mcp), and the path of a
// configured resource_metadata_url. Each serves the same document, whose
// resource is the audience: clients that try the root form (older MCP
// clients do) then ask for tokens for the right resource.
func (s *ResourceServer) MetadataPaths() []string {
	paths := []string{WellKnownPath}
	add := func(raw string) {
		if u, err := url.Parse(raw); err == nil && u.Path != "" && !slices.Contains(paths, u.Path) {
			paths = append(paths, u.Path)
		}
	}
	if u, err := url.Parse(s.cfg.Audience); err == nil && strings.Trim(u.Path, "/") != "" {
		add(WellKnownPath + strings.TrimRight(u.Path, "/"))
	}
	add(s.metadataURL)
	return paths
}

// MetadataHandler serves the Protected Resource Metadata (GET, with CORS
// open to any origin: it is public). It is go-sdk's
// auth.ProtectedResourceMetadataHandler.
func (s *ResourceServer) MetadataHandler() http.Handler {
	return mcpauth.ProtectedResourceMetadataHandler(s.Metadata())
}

// Mount registers MetadataHandler on mux at every MetadataPaths path. These
// paths must not be behind the token check: clients read them before they
// have a token.
func (s *ResourceServer) Mount(mux *http.ServeMux) {
	h := s.MetadataHandler()
	for _, p := range s.MetadataPaths() {
		mux.Handle(p, h)
	}
}

// verifiedKey carries the TokenInfo this package verified to the verifier
// handed to go-sdk's RequireBearerToken.
type verifiedKey struct{}

// Middleware requires a valid bearer token with the configured scopes
// before next runs:
//   - no token: 401, WWW-Authenticate: Bearer resource_metadata="…"
//     (with scope="…" when scopes are configured);
//   - a malformed Authorization header: 400, error="invalid_request";
//   - a token refused: 401, error="invalid_token" and error_description;
//   - a token lacking a configured scope: 403, error="insufficient_scope";
//   - the issuer's keys unavailable: 503 (the token was not judged).
//
// A verified token then goes through go-sdk's auth.RequireBearerToken,
// which is what puts it where go-sdk reads it (the request's TokenInfo,
// and session-to-user binding). That middleware is wrapped rather than
// used alone because its challenges carry no error parameter, so a client
// could not tell "no token" from "token refused" (RFC 6750 §3.1), and it
// answers 500 where the issuer is unreachable.
func (s *ResourceServer) Middleware(next http.Handler) http.Handler {
	inner := mcpauth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*mcpauth.TokenInfo, error) {
		if info, ok := ctx.Value(verifiedKey{}).(*mcpauth.TokenInfo); ok && info != nil {
			return info, nil
		}
		return nil, invalid("token not verified", nil)
	}, &mcpauth.RequireBearerTokenOptions{
		ResourceMetadataURL: s.metadataURL,
		ClockSkew:           time.Duration(s.cfg.ClockSkew),
	})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, present := bearerToken(r)
		if token == "" {
			if present {
				InvalidRequest(w, s.metadataURL, "the Authorization header must be: Bearer <token>")
				return
			}
			Unauthorized(w, s.metadataURL, s.cfg.Scopes)
			return
		}
		info, err := s.Verify(r.Context(), token, r)
		if err != nil {
			if errors.Is(err, mcpauth.ErrInvalidToken) {
				s.logger.Debug("refused bearer token", "error", err, "remote", r.RemoteAddr)
				InvalidToken(w, s.metadataURL, describe(err))
				return
			}
			s.logger.Error("cannot verify bearer token", "error", err)
			w.Header().Set("Retry-After", "5")
			http.Error(w, "authorization temporarily unavailable", http.StatusServiceUnavailable)
			return
		}
		if !HasScopes(info, s.cfg.Scopes) {
			InsufficientScope(w, s.metadataURL, s.cfg.Scopes, "the token lacks a scope this server requires")
			return
		}
		inner.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), verifiedKey{}, info)))
	})
}

// bearerToken returns the request's bearer token, parsed as go-sdk's
// middleware does, and whether an Authorization header was sent at all. A
// header with another scheme (e.g. Basic) counts as no token.
func bearerToken(r *http.Request) (token string, present bool) {
	h := r.Header.Values("Authorization")
	if len(h) == 0 {
		return "", false
	}
	fields := strings.Fields(h[0])
	if len(fields) == 0 || !strings.EqualFold(fields[0], "bearer") {
		return "", false
	}
	if len(h) != 1 || len(fields) != 2 {
		return "", true
	}
	return fields[1], true
}

// InsufficientScope answers 403 with WWW-Authenticate: Bearer
// error="insufficient_scope", scope="<scopes>", resource_metadata="<url>"
// (RFC 6750 §3.1, MCP step-up authorization). scopes are those the
// operation needs.
func InsufficientScope(w http.ResponseWriter, resourceMetadataURL string, scopes []string, description string) {
	challenge(w, http.StatusForbidden, resourceMetadataURL, "insufficient_scope", description, scopes)
}

// InsufficientScope answers 403 insufficient_scope for an operation
// needing required (in addition to the server-wide scopes) with this
// server's metadata URL.
func (s *ResourceServer) InsufficientScope(w http.ResponseWriter, required []string, description string) {
	InsufficientScope(w, s.metadataURL, s.operationScopes(required), description)
}

// operationScopes is the server-wide scopes plus required, deduplicated.
func (s *ResourceServer) operationScopes(required []string) []string {
	out := slices.Clone(s.cfg.Scopes)
	for _, r := range required {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// InvalidToken answers 401 with WWW-Authenticate: Bearer
// error="invalid_token", error_description="…", resource_metadata="<url>".
func InvalidToken(w http.ResponseWriter, resourceMetadataURL, description string) {
	challenge(w, http.StatusUnauthorized, resourceMetadataURL, "invalid_token", description, nil)
}

// InvalidRequest answers 400 with WWW-Authenticate: Bearer
// error="invalid_request", … (a malformed Authorization header).
func InvalidRequest(w http.ResponseWriter, resourceMetadataURL, description string) {
	challenge(w, http.StatusBadRequest, resourceMetadataURL, "invalid_request", description, nil)
}

// Unauthorized answers a request without a token: 401 with
// WWW-Authenticate: Bearer resource_metadata="<url>"[, scope="…"]; no
// error code, as RFC 6750 §3.1 asks when no credentials were sent.
func Unauthorized(w http.ResponseWriter, resourceMetadataURL string, scopes []string) {
	challenge(w, http.StatusUnauthorized, resourceMetadataURL, "", "", scopes)
}

// Unauthorized answers a request without a token with this server's
// metadata URL and scopes (see the function Unauthorized).
func (s *ResourceServer) Unauthorized(w http.ResponseWriter) {
	Unauthorized(w, s.metadataURL, s.cfg.Scopes)
}

func challenge(w http.ResponseWriter, status int, metadataURL, code, description string, scopes []string) {
	var params []string
	if code != "" {
		params = append(params, "error="+quote(code))
		if description != "" {
			params = append(params, "error_description="+quote(description))
		}
	}
	if len(scopes) > 0 {
		params = append(params, "scope="+quote(strings.Join(scopes, " ")))
	}
	if metadataURL != "" {
		params = append(params, "resource_metadata="+quote(metadataURL))
	}
	value := "Bearer"
	if len(params) > 0 {
		value += " " + strings.Join(params, ", ")
	}
	w.Header().Set("WWW-Authenticate", value)
	msg := http.StatusText(status)
	if description != "" {
		msg += ": " + description
	}
	http.Error(w, msg, status)
}

// quote makes an HTTP quoted-string (RFC 9110 §5.6.4) holding only the
// characters RFC 6750 §3 allows in its parameters (printable ASCII but
// the double quote and the backslash); others are replaced, so a header
// never carries control characters whatever a description holds.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteByte('\'')
		case r == '\\':
			b.WriteByte('/')
		case r < 0x20 || r > 0x7e:
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
