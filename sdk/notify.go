package sdk

import (
	"encoding/json"
	"fmt"
	"time"
)

// LogLevel is the severity of a log message, as the MCP specification
// defines it (RFC 5424 levels): of an MCP log message to the client
// ([Context.LogMessage]) and of a message to the host's log ([Context.Log]).
type LogLevel string

// Logging levels, from the least to the most severe.
const (
	LevelDebug     LogLevel = "debug"
	LevelInfo      LogLevel = "info"
	LevelNotice    LogLevel = "notice"
	LevelWarning   LogLevel = "warning"
	LevelError     LogLevel = "error"
	LevelCritical  LogLevel = "critical"
	LevelAlert     LogLevel = "alert"
	LevelEmergency LogLevel = "emergency"
)

// loggingMessage is the payload of notify_logging_message: the params of an
// MCP notifications/message.
type loggingMessage struct {
	Level  LogLevel `json:"level"`
	Logger string   `json:"logger,omitempty"`
	Data   any      `json:"data"`
}

// LogMessage sends an MCP log message (notifications/message) to the client
// whose request this call serves, and to the host's log. data is any value
// that marshals to JSON, typically a string or an object. The client
// receives it only if it asked for messages of this level or more severe
// (logging/setLevel, or the request's log level). The logger is the
// plugin's name; see [Context.LogMessageAs] to name another.
//
// Unlike [Context.Log], which writes only to the host's log, this reaches
// the client. A level the host does not know is dropped (and logged by the
// host).
func (c *Context) LogMessage(level LogLevel, data any) { c.LogMessageAs("", level, data) }

// LogMessageAs is [Context.LogMessage] with the message's logger set to
// logger (the host uses the plugin's name when it is empty).
func (c *Context) LogMessageAs(logger string, level LogLevel, data any) {
	b, err := json.Marshal(loggingMessage{Level: level, Logger: logger, Data: data})
	if err != nil {
		b, _ = json.Marshal(loggingMessage{Level: level, Logger: logger,
			Data: fmt.Sprintf("sdk: log data does not marshal to JSON: %v", err)})
	}
	notifyLoggingMessage(b)
}

// progressParams is the payload of notify_progress.
type progressParams struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// Progress reports the progress of the request this call serves
// (notifications/progress). progress should increase with every call; total
// is the amount of work when known (0 leaves it out), and message an
// optional description. The host attaches the request's progress token;
// when the client sent none ([Context.ProgressToken] is nil) nothing is
// sent to it.
func (c *Context) Progress(progress, total float64, message string) {
	b, _ := json.Marshal(progressParams{Progress: progress, Total: total, Message: message})
	notifyProgress(b)
}

// ResourceUpdated tells the clients subscribed to uri (resources/subscribe)
// that the resource changed (notifications/resources/updated); they may read
// it again. It may be called from any handler.
func ResourceUpdated(uri string) {
	b, _ := json.Marshal(struct {
		URI string `json:"uri"`
	}{uri})
	notifyResourceUpdated(b)
}

// listKind names a list a plugin may announce as changed.
type listKind string

const (
	toolList     listKind = "tool"
	resourceList listKind = "resource"
	promptList   listKind = "prompt"
)

// ToolListChanged tells the host that the plugin's list of tools changed
// (what list_tools returns). What the host does with it is the host's
// business (mcphost re-reads lists when it reloads a plugin).
func ToolListChanged() { notifyListChanged(toolList) }

// ResourceListChanged tells the host that the plugin's list of resources or
// resource templates changed. See [ToolListChanged].
func ResourceListChanged() { notifyListChanged(resourceList) }

// PromptListChanged tells the host that the plugin's list of prompts
// changed. See [ToolListChanged].
func PromptListChanged() { notifyListChanged(promptList) }

// CloseSSEStream asks the host to end the HTTP response stream of the
// current request now, telling the client to reconnect after retryAfter;
// the handler's result reaches the client on the resumed stream (MCP
// SEP-1699 polling). It suits a long call behind a proxy that cuts idle
// connections. It does nothing where the transport has no such stream
// (stdio, the stateless 2026-07-28 revision).
func (c *Context) CloseSSEStream(retryAfter time.Duration) {
	b, _ := json.Marshal(struct {
		RetryAfterMs int64 `json:"retryAfterMs"`
	}{retryAfter.Milliseconds()})
	closeSSEStream(b)
}
