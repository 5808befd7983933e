//go:build !wasip1

package sdk

// Outside WASI (the SDK's own tests) there is no Extism host: config comes
// from stubConfig and log messages go to stubLog.

var (
	stubConfig map[string]string
	stubLog    []string
)

func getConfig(key string) (string, bool) {
	v := stubConfig[key]
	return v, v != ""
}

func logMessage(_ LogLevel, msg string) { stubLog = append(stubLog, msg) }
