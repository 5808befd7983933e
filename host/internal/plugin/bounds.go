package plugin

// maxErrorTextBytes bounds the text of an error a plugin reports (its
// message, and its data) on the way to a client. The error as a whole is
// first capped at max_output_kb like any output; this keeps what a client
// and a model read, and what the log and the breaker keep, short.
const maxErrorTextBytes = 8 << 10
