package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// maxTokenBytes bounds a bearer token; real access tokens are a few KiB.
const maxTokenBytes = 16 << 10

// Keys of TokenInfo.Extra set by [ResourceServer.Verify].
const (
	// ExtraSubject holds the sub claim (string; may be "").
	ExtraSubject = "sub"
	// ExtraClientID holds the OAuth client the token was issued to: the
	// client_id claim (RFC 9068), else azp (string; may be "").
	ExtraClientID = "client_id"
	// ExtraIssuer holds the iss claim (string).
	ExtraIssuer = "iss"
	// ExtraTokenID holds the jti claim (string; may be "").
	ExtraTokenID = "jti"
)

// tokenError is a token refused for a reason that may be told to the
// client (error_description). It unwraps to go-sdk's ErrInvalidToken.
type tokenError struct {
	desc string
	err  error // the underlying cause, for logs; may be nil
}

func (e *tokenError) Error() string {
	if e.err != nil {
		return fmt.Sprintf("invalid token: %s: %v", e.desc, e.err)
	}
	return "invalid token: " + e.desc
}

func (e *tokenError) Unwrap() []error {
	if e.err != nil {
		return []error{mcpauth.ErrInvalidToken, e.err}
	}
	return []error{mcpauth.ErrInvalidToken}
}

func invalid(desc string, err error) error { return &tokenError{desc: desc, err: err} }

// describe returns the client-safe description of a token error.
func describe(err error) string {
	var te *tokenError
	if errors.As(err, &te) {
		return te.desc
	}
	return "the access token is invalid"
}

// extraClaims are the non-registered claims the host reads.
type extraClaims struct {
	Scope    any    `json:"scope"`
	Scp      any    `json:"scp"`
	ClientID string `json:"client_id"`
	Azp      string `json:"azp"`
}

// Verify checks a bearer JWT: signature by a key of the issuer with an
// allowed algorithm, iss, aud (must contain the configured audience), exp
// (required), nbf and iat with the configured leeway. It returns the token's
// subject, scopes, client and expiry. Its signature is go-sdk's
// [mcpauth.TokenVerifier]. A refused token's error wraps
// [mcpauth.ErrInvalidToken]; an error that does not means the keys could
// not be had (the token was not judged).
func (s *ResourceServer) Verify(ctx context.Context, token string, _ *http.Request) (*mcpauth.TokenInfo, error) {
	if len(token) > maxTokenBytes {
		return nil, invalid("token too large", nil)
	}
	tok, err := jwt.ParseSigned(token, s.algs)
	if err != nil {
		return nil, invalid("malformed token or signature algorithm not accepted", err)
	}
	if len(tok.Headers) != 1 {
		return nil, invalid("token must have exactly one signature", nil)
	}
	hdr := tok.Headers[0]
	alg := jose.SignatureAlgorithm(hdr.Algorithm)
	keys, err := s.keys.candidates(ctx, hdr.KeyID, alg)
	if err != nil {
		return nil, fmt.Errorf("verify token: %w", err)
	}
	if len(keys) == 0 {
		return nil, invalid("token signed by an unknown key", fmt.Errorf("kid %q alg %s", hdr.KeyID, alg))
	}
	var (
		std   jwt.Claims
		extra extraClaims
		sigOK bool
		last  error
	)
	for _, k := range keys {
		if last = tok.Claims(k.Key, &std, &extra); last == nil {
			sigOK = true
			break
		}
	}
	if !sigOK {
		return nil, invalid("bad token signature or claims", last)
	}
	switch err := std.ValidateWithLeeway(jwt.Expected{Issuer: s.cfg.Issuer, Time: time.Now()}, time.Duration(s.cfg.ClockSkew)); {
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return nil, invalid("token issued by another issuer", err)
	case errors.Is(err, jwt.ErrExpired):
		return nil, invalid("token expired", err)
	case errors.Is(err, jwt.ErrNotValidYet):
		return nil, invalid("token not valid yet", err)
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return nil, invalid("token issued in the future", err)
	case err != nil:
		return nil, invalid("token claims invalid", err)
	}
	if std.Issuer != s.cfg.Issuer { // ValidateWithLeeway skips an empty expectation; be explicit
		return nil, invalid("token issued by another issuer", nil)
	}
	if std.Expiry == nil {
		return nil, invalid("token has no expiry", nil)
	}
	if !oauthex.MatchesResource(std.Audience, s.cfg.Audience) {
		// No token passthrough: a token for another resource is not ours.
		return nil, invalid("token audience does not include this server", fmt.Errorf("aud %q", []string(std.Audience)))
	}
	scopes, err := scopeClaims(extra.Scope, extra.Scp)
	if err != nil {
		return nil, invalid("malformed scope claim", err)
	}
	clientID := extra.ClientID
	if clientID == "" {
		clientID = extra.Azp
	}
	userID := std.Subject
	if userID == "" && clientID != "" {
		userID = "client:" + clientID
	}
	return &mcpauth.TokenInfo{
		Scopes:     scopes,
		Expiration: std.Expiry.Time(),
		UserID:     userID,
		Extra: map[string]any{
			ExtraSubject:  std.Subject,
			ExtraClientID: clientID,
			ExtraIssuer:   std.Issuer,
			ExtraTokenID:  std.ID,
		},
	}, nil
}

// scopeClaims merges the scope claim (RFC 8693/9068: a space-separated
// string) and the scp claim (an array, or a string at some issuers), in
// order, without duplicates.
func scopeClaims(claims ...any) ([]string, error) {
	var out []string
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, c := range claims {
		switch v := c.(type) {
		case nil:
		case string:
			for _, s := range strings.Fields(v) {
				add(s)
			}
		case []any:
			for _, e := range v {
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("scope array holds %T", e)
				}
				add(s)
			}
		default:
			return nil, fmt.Errorf("scope claim is %T", v)
		}
	}
	return out, nil
}

// HasScopes reports whether the token grants every scope in required. No
// required scopes is always true; a nil info with required scopes is false.
// Use it to hide tools from tools/list.
func HasScopes(info *mcpauth.TokenInfo, required []string) bool {
	if len(required) == 0 {
		return true
	}
	if info == nil {
		return false
	}
	for _, r := range required {
		if !slices.Contains(info.Scopes, r) {
			return false
		}
	}
	return true
}

// Subject names the caller for the audit log: the token's sub, else
// "client:<client id>" for a token with no subject (client credentials),
// else "". A nil info gives "".
func Subject(info *mcpauth.TokenInfo) string {
	if info == nil {
		return ""
	}
	if info.UserID != "" {
		return info.UserID
	}
	if sub := extraString(info, ExtraSubject); sub != "" {
		return sub
	}
	if id := ClientID(info); id != "" {
		return "client:" + id
	}
	return ""
}

// ClientID returns the OAuth client the token was issued to ("" if the
// token does not say, or info is nil).
func ClientID(info *mcpauth.TokenInfo) string {
	return extraString(info, ExtraClientID)
}

func extraString(info *mcpauth.TokenInfo, key string) string {
	if info == nil {
		return ""
	}
	s, _ := info.Extra[key].(string)
	return s
}
