package config

import (
	"fmt"
	"net/url"
)

// Telemetry is [server.telemetry]: OpenTelemetry export of traces and
// metrics. Each field left empty falls back to its OTEL_* environment
// variable (docs/config.md, "Traces and OpenTelemetry metrics").
type Telemetry struct {
	TracesExporter  string // "otlp" or "none" (OTEL_TRACES_EXPORTER)
	MetricsExporter string // "otlp" or "none" (OTEL_METRICS_EXPORTER)
	Endpoint        string // OTLP endpoint URL (OTEL_EXPORTER_OTLP_ENDPOINT)
	Protocol        string // "http/protobuf" or "grpc" (OTEL_EXPORTER_OTLP_PROTOCOL)
	ServiceName     string // service.name (OTEL_SERVICE_NAME)
	Sampler         string // OTEL_TRACES_SAMPLER
	SamplerArg      string // OTEL_TRACES_SAMPLER_ARG
}

type keyProblem struct{ key, msg string }

// check returns what is wrong with the values set (empty ones are the
// environment's, checked when the host starts).
func (t Telemetry) check() []keyProblem {
	var out []keyProblem
	oneOf := func(key, v string, words ...string) {
		if v == "" {
			return
		}
		for _, w := range words {
			if v == w {
				return
			}
		}
		out = append(out, keyProblem{key, fmt.Sprintf("%q is not one of %q", v, words)})
	}
	oneOf("traces_exporter", t.TracesExporter, "otlp", "none")
	oneOf("metrics_exporter", t.MetricsExporter, "otlp", "none")
	oneOf("protocol", t.Protocol, "http/protobuf", "grpc")
	oneOf("sampler", t.Sampler, "always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio")
	if t.Endpoint != "" {
		if u, err := url.Parse(t.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			out = append(out, keyProblem{"endpoint", fmt.Sprintf("%q is not an http:// or https:// URL with a host", t.Endpoint)})
		}
	}
	return out
}
