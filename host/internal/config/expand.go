package config

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
)

// envReference is a reference to an environment variable in a plugin's
// config value: ${NAME}, or ${NAME:-default}, the syntax hyper-mcp expands
// in its config (its src/expand_env.rs); $${ is a literal ${.
var envReference = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)

// escapedDollarBrace stands for $${ while references are expanded.
const escapedDollarBrace = "\x00$${\x00"

// expandEnv expands the environment references in s with lookup, as
// hyper-mcp does: a variable that is unset or empty takes its default, and
// without a default it is an error naming it. Anything else that looks
// like a reference but is not one is kept as it is.
func expandEnv(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	masked := strings.ReplaceAll(s, "$${", escapedDollarBrace)
	var missing []string
	expanded := envReference.ReplaceAllStringFunc(masked, func(ref string) string {
		m := envReference.FindStringSubmatch(ref)
		if v, ok := lookup(m[1]); ok && v != "" {
			return v
		}
		if strings.Contains(ref, ":-") {
			return m[2]
		}
		missing = append(missing, m[1])
		return ref
	})
	if len(missing) > 0 {
		slices.Sort(missing)
		return "", fmt.Errorf("environment variable %s is not set (write $${ for a literal ${, or ${NAME:-default})", strings.Join(slices.Compact(missing), ", "))
	}
	return strings.ReplaceAll(expanded, escapedDollarBrace, "${"), nil
}

// expandConfigEnv expands the environment references in a plugin's config
// values from the host's environment; bad reports a value that names a
// variable that is not set.
func expandConfigEnv(values map[string]string, bad func(key, format string, args ...any)) map[string]string {
	if values == nil {
		return nil
	}
	out := make(map[string]string, len(values))
	for _, key := range slices.Sorted(maps.Keys(values)) {
		v, err := expandEnv(values[key], os.LookupEnv)
		if err != nil {
			bad("config."+key, "%v", err)
			continue
		}
		out[key] = v
	}
	return out
}
