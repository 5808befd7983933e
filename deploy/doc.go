// Package deploy holds no code: this directory has the files that deploy
// mcphost (Dockerfile, haproxy.cfg, kubernetes.yaml, mcphost.toml; see the
// README's "Running it for real"), and haproxy_test.go runs that setup for
// real — two stateless replicas behind HAProxy, one of them drained
// mid-run — when haproxy is installed.
package deploy
