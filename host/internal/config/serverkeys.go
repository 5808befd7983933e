package config

import "reflect"

// serverKeys names each field of Server by its key in [server] (a table's
// fields by the table's name), for ChangedServerKeys.
var serverKeys = map[string]string{
	"Name": "name", "LogLevel": "log_level", "CacheDir": "cache_dir", "Transport": "transport",
	"Listen": "listen", "Stateless": "stateless", "PageSize": "page_size", "MaxMemoryMB": "max_memory_mb", "MaxStateMB": "max_state_mb", "MaxIdleCodeMB": "max_idle_code_mb",
	"ListTTL": "list_ttl", "AllowedOrigins": "allowed_origins", "SessionTimeout": "session_timeout", "StartWait": "start_wait", "BackgroundCompile": "background_compile",
	"MaxSessions": "max_sessions", "MaxSessionsPerUser": "max_sessions_per_user", "Watch": "watch", "LockFile": "lock_file", "DrainDelay": "drain_delay",
	"Tasks": "tasks", "Telemetry": "telemetry", "Metrics": "metrics", "Audit": "audit", "Auth": "auth", "PluginStore": "plugin_store",
	"TrustedKeys": "trusted_keys", "TrustedRoot": "trusted_root", "SignerSubject": "signer_subject",
	"SignerIssuer": "signer_issuer",
}

// ChangedServerKeys returns the [server] keys whose values differ between
// was and now, in the order Server declares them.
func ChangedServerKeys(was, now Server) []string {
	wv, nv := reflect.ValueOf(was), reflect.ValueOf(now)
	var keys []string
	for i := range wv.NumField() {
		if !reflect.DeepEqual(wv.Field(i).Interface(), nv.Field(i).Interface()) {
			keys = append(keys, serverKeys[wv.Type().Field(i).Name])
		}
	}
	return keys
}
