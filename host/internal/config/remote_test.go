package config

import (
	"strings"
	"testing"
)

func TestParseRemoteSources(t *testing.T) {
	cfg, err := Parse("/etc/mcphost/mcphost.toml", []byte(`
[server]
plugin_store = "store"

[[plugin]]
name = "tagged"
path = "oci://127.0.0.1:5000/plugins/hello:1.0"
insecure = true
skip_signature = true

[[plugin]]
name = "pinned"
path = "oci://ghcr.io/acme/hello@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

[[plugin]]
name = "url"
path = "https://example.com/hello.wasm"
sha256 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.PluginStore != "/etc/mcphost/store" {
		t.Errorf("plugin_store = %q, want it beside the config", cfg.Server.PluginStore)
	}
	for i, want := range []struct {
		source         string
		insecure, skip bool
	}{
		{"oci://127.0.0.1:5000/plugins/hello:1.0", true, true},
		{"oci://ghcr.io/acme/hello@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", false, false},
		{"https://example.com/hello.wasm", false, false},
	} {
		p := cfg.Plugins[i]
		if p.Source != want.source || p.Path != "" || p.Insecure != want.insecure || p.SkipSignature != want.skip {
			t.Errorf("plugin %q: source %q path %q insecure %v skip_signature %v; want %+v", p.Name, p.Source, p.Path, p.Insecure, p.SkipSignature, want)
		}
	}
}

func TestParseRemoteSourceErrors(t *testing.T) {
	for _, tc := range []struct {
		name, plugin string
		want         []string
	}{
		{"no tag or digest", `path = "oci://ghcr.io/acme/hello"`, []string{`plugin "p"`, "path", "oci://ghcr.io/acme/hello", "names no tag or digest"}},
		{"bad reference", `path = "oci://ghcr.io/ACME/hello:1"`, []string{`plugin "p"`, "path", "oci://ghcr.io/ACME/hello:1", "not an OCI reference"}},
		{"other digest", `path = "oci://ghcr.io/acme/hello@sha512:` + strings.Repeat("0", 128) + `"`, []string{`plugin "p"`, "sha512", "sha256 only"}},
		{"plain http", `path = "http://example.com/hello.wasm"`, []string{`plugin "p"`, "http://example.com/hello.wasm", "plain http:// is not accepted"}},
		{"url without sha256", `path = "https://example.com/hello.wasm"`, []string{`plugin "p"`, "sha256: missing", "https://example.com/hello.wasm"}},
		{"insecure remote registry", "path = \"oci://ghcr.io/acme/hello:1\"\ninsecure = true", []string{`plugin "p"`, "insecure", `"ghcr.io" is not`}},
		{"insecure local file", "path = \"a.wasm\"\ninsecure = true", []string{`plugin "p"`, "insecure", "local file"}},
		{"skip_signature local file", "path = \"a.wasm\"\nskip_signature = true", []string{`plugin "p"`, "skip_signature", "local file"}},
		{"keyless incomplete", "path = \"oci://ghcr.io/acme/a:1\"\nsigner_subject = \"me@example.com\"", []string{`plugin "p"`, "trusted_root, signer_subject and signer_issuer go together"}},
		{"keyless local file", "path = \"a.wasm\"\nsigner_subject = \"me@example.com\"", []string{`plugin "p"`, "local file"}},
		{"trusted_keys local file", "path = \"a.wasm\"\ntrusted_keys = [\"k.pub\"]", []string{`plugin "p"`, "trusted_keys", "local file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.toml", []byte("[[plugin]]\nname = \"p\"\n"+tc.plugin+"\n"))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestParseTrustedKeys(t *testing.T) {
	cfg, err := Parse("/etc/mcphost/mcphost.toml", []byte(`
[server]
trusted_keys = ["keys/team.pub", "/opt/other.pub"]

[[plugin]]
name = "default"
path = "oci://ghcr.io/acme/a:1"

[[plugin]]
name = "own"
path = "oci://ghcr.io/acme/b:1"
trusted_keys = ["vendor.pub"]

[[plugin]]
name = "local"
path = "a.wasm"
`))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"/etc/mcphost/keys/team.pub", "/opt/other.pub"}, {"/etc/mcphost/vendor.pub"}, nil}
	for i, p := range cfg.Plugins {
		if strings.Join(p.TrustedKeys, ",") != strings.Join(want[i], ",") {
			t.Errorf("plugin %q trusts %v, want %v", p.Name, p.TrustedKeys, want[i])
		}
	}
}

func TestParseKeylessSigner(t *testing.T) {
	cfg, err := Parse("/etc/mcphost/mcphost.toml", []byte(`
[server]
trusted_root = "trusted_root.json"
signer_subject = "https://github.com/acme/a/.github/workflows/release.yml@refs/tags/v1"
signer_issuer = "https://token.actions.githubusercontent.com"

[[plugin]]
name = "a"
path = "oci://ghcr.io/acme/a:1"
`))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Plugins[0]
	if p.TrustedRoot != "/etc/mcphost/trusted_root.json" || p.SignerIssuer != "https://token.actions.githubusercontent.com" || !strings.HasPrefix(p.SignerSubject, "https://github.com/acme/a/") {
		t.Fatalf("keyless signer = %q %q %q", p.TrustedRoot, p.SignerSubject, p.SignerIssuer)
	}
	if _, err := Parse("x.toml", []byte("[server]\ntrusted_root = \"r.json\"\n")); err == nil || !strings.Contains(err.Error(), "go together") {
		t.Fatalf("incomplete [server] keyless signer: %v", err)
	}
}
