package auth

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

func TestValidate(t *testing.T) {
	good := Config{
		Issuer:   "https://auth.example.com",
		Audience: "https://mcp.example.com/mcp",
		JWKSURL:  "https://auth.example.com/jwks.json",
		Scopes:   []string{"mcp:tools"},
	}
	if err := good.Validate(); err != nil {
		t.Fatalf("good config: %v", err)
	}
	loop := good
	loop.Issuer, loop.Audience, loop.JWKSURL = "http://127.0.0.1:9000", "http://localhost:8808/mcp", "http://[::1]:9000/jwks"
	if err := loop.Validate(); err != nil {
		t.Errorf("loopback http: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no issuer", func(c *Config) { c.Issuer = "" }, "server.auth.issuer: required"},
		{"no audience", func(c *Config) { c.Audience = "" }, "server.auth.audience: required"},
		{"relative audience", func(c *Config) { c.Audience = "/mcp" }, "server.auth.audience"},
		{"audience with query", func(c *Config) { c.Audience += "?x=1" }, "server.auth.audience: \"https://mcp.example.com/mcp?x=1\" must not have a query"},
		{"http audience", func(c *Config) { c.Audience = "http://mcp.example.com/mcp" }, "server.auth.audience: \"http://mcp.example.com/mcp\" must use https"},
		{"no keys", func(c *Config) { c.JWKSURL = "" }, "server.auth.jwks_url: one of jwks_url and key_file is required"},
		{"both keys", func(c *Config) { c.KeyFile = "k.pem" }, "set only one of jwks_url and key_file"},
		{"http jwks", func(c *Config) { c.JWKSURL = "http://auth.example.com/jwks" }, "server.auth.jwks_url: \"http://auth.example.com/jwks\" must use https"},
		{"missing key file", func(c *Config) { c.JWKSURL, c.KeyFile = "", "/nonexistent/k.pem" }, "server.auth.key_file: read key file"},
		{"alg none", func(c *Config) { c.Algorithms = []string{"none"} }, "server.auth.algorithms: \"none\" is not accepted"},
		{"alg HS256", func(c *Config) { c.Algorithms = []string{"RS256", "HS256"} }, "server.auth.algorithms: \"HS256\" is not accepted"},
		{"bad scope", func(c *Config) { c.Scopes = []string{"a b"} }, "server.auth.scopes: \"a b\" is not a scope token"},
		{"bad supported scope", func(c *Config) { c.ScopesSupported = []string{`q"`} }, "server.auth.scopes_supported"},
		{"big skew", func(c *Config) { c.ClockSkew = Duration(time.Hour) }, "server.auth.clock_skew: 1h0m0s is out of range"},
		{"min refresh over ttl", func(c *Config) {
			c.JWKSMinRefresh, c.JWKSCacheTTL = Duration(time.Hour), Duration(time.Minute)
		}, "server.auth.jwks_min_refresh: 1h0m0s is longer than jwks_cache_ttl"},
		{"bad authorization server", func(c *Config) { c.AuthorizationServers = []string{"javascript:alert(1)"} }, "server.auth.authorization_servers[0]"},
		{"bad metadata url", func(c *Config) { c.ResourceMetadataURL = "ftp://x" }, "server.auth.resource_metadata_url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			c.Scopes = slices.Clone(good.Scopes)
			tc.edit(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	// All problems at once, one per line.
	err := Config{}.Validate()
	if err == nil || strings.Count(err.Error(), "\n") < 2 {
		t.Errorf("empty config: %v, want several problems", err)
	}
	if (Config{}).Enabled() || !good.Enabled() {
		t.Error("Enabled")
	}
}

func TestTOML(t *testing.T) {
	const text = `
[server.auth]
issuer = "https://auth.example.com"
audience = "https://mcp.example.com/mcp"
jwks_url = "https://auth.example.com/.well-known/jwks.json"
scopes = ["mcp:tools"]
clock_skew = "45s"
jwks_cache_ttl = "10m"
jwks_min_refresh = "1m"
resource_name = "Example"
`
	var doc struct {
		Server struct {
			Auth Config `toml:"auth"`
		} `toml:"server"`
	}
	md, err := toml.Decode(text, &doc)
	if err != nil {
		t.Fatal(err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		t.Errorf("undecoded keys %v", u)
	}
	c := doc.Server.Auth
	if time.Duration(c.ClockSkew) != 45*time.Second || time.Duration(c.JWKSCacheTTL) != 10*time.Minute || time.Duration(c.JWKSMinRefresh) != time.Minute {
		t.Errorf("durations %v %v %v", c.ClockSkew, c.JWKSCacheTTL, c.JWKSMinRefresh)
	}
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
	if _, err := toml.Decode("[server.auth]\nclock_skew = 30\n", &doc); err == nil {
		t.Error("a bare number accepted as a duration")
	}
	if _, err := toml.Decode("[server.auth]\nclock_skew = \"soon\"\n", &doc); err == nil || !strings.Contains(err.Error(), "not a duration") {
		t.Errorf("bad duration: %v", err)
	}
}

// TestTOMLKeys keeps TOMLKeys in step with the struct's tags.
func TestTOMLKeys(t *testing.T) {
	var tags []string
	rt := reflect.TypeFor[Config]()
	for i := range rt.NumField() {
		tags = append(tags, rt.Field(i).Tag.Get("toml"))
	}
	got := TOMLKeys()
	slices.Sort(tags)
	slices.Sort(got)
	if !slices.Equal(got, tags) {
		t.Errorf("TOMLKeys() = %q, struct tags %q", got, tags)
	}
}
