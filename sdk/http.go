package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
)

// HTTPRequest is an outbound HTTP request made through the host, which
// sends it only to the hosts the plugin's config allows (allowed_hosts).
type HTTPRequest struct {
	Method  string            `json:"method"` // default GET
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    []byte            `json:"body,omitempty"`
}

// HTTPResponse is the host's answer to an HTTPRequest.
type HTTPResponse struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    []byte            `json:"body,omitempty"`
}

// HTTP sends req through the host's http_request host function. It fails
// with the host's reason when the request is refused (a host not in
// allowed_hosts, a private address, a redirect elsewhere, a response over
// the size cap) or cannot be made.
func HTTP(req HTTPRequest) (*HTTPResponse, error) {
	payload, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	answer := httpRequest(payload)
	if len(answer) == 0 {
		return nil, errors.New("http_request: no answer from the host")
	}
	var resp struct {
		HTTPResponse
		Error string `json:"error"`
	}
	if err := json.Unmarshal(answer, &resp); err != nil {
		return nil, fmt.Errorf("http_request: %w", err)
	}
	if resp.Error != "" {
		return nil, fmt.Errorf("http_request: %s", resp.Error)
	}
	return &resp.HTTPResponse, nil
}
