package lookup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Request is an HTTP request as logged: what the HTTP libraries key and
// fingerprint.
type Request struct {
	Method  string
	Path    string            // the request target: path and query
	Headers map[string]string // names in lower case
	Body    []byte            // the body's text; nil: none
}

// Header is the named header's value ("" when absent), any case.
func (r *Request) Header(name string) string {
	return r.Headers[strings.ToLower(name)]
}

// maxRequest bounds what a request or event file may hold.
const maxRequest = 8 << 20

// ParseRequest reads a request as JSON, {"method", "path" (or "url"),
// "headers", "body"}, or as raw HTTP/1.1 text. A JSON body that is a
// string is the body's text; any other JSON value is the body itself, as
// written.
func ParseRequest(data []byte) (*Request, error) {
	if len(data) > maxRequest {
		return nil, fmt.Errorf("request of %d bytes: at most %d", len(data), maxRequest)
	}
	trim := bytes.TrimSpace(data)
	if len(trim) == 0 {
		return nil, errors.New("empty request: want JSON {method, path, headers, body} or HTTP/1.1 text")
	}
	var r *Request
	var err error
	if trim[0] == '{' {
		r, err = parseJSONRequest(trim)
	} else {
		r, err = parseRawRequest(data)
	}
	if err != nil {
		return nil, err
	}
	if r.Method == "" || r.Path == "" {
		return nil, errors.New("request: needs a method and a path")
	}
	return r, nil
}

type jsonRequest struct {
	Method  string                     `json:"method"`
	Path    string                     `json:"path"`
	URL     string                     `json:"url"`
	Headers map[string]json.RawMessage `json:"headers"`
	Body    json.RawMessage            `json:"body"`
}

func parseJSONRequest(data []byte) (*Request, error) {
	var j jsonRequest
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("request JSON: %v", err)
	}
	r := &Request{Method: j.Method, Path: j.Path, Headers: map[string]string{}}
	if r.Path == "" {
		r.Path = targetPath(j.URL)
	}
	for name, raw := range j.Headers {
		var s string
		var list []string
		switch {
		case json.Unmarshal(raw, &s) == nil:
		case json.Unmarshal(raw, &list) == nil:
			s = strings.Join(list, ", ")
		default:
			return nil, fmt.Errorf("request JSON: header %q: want a string or a list of strings", name)
		}
		r.Headers[strings.ToLower(name)] = s
	}
	body := bytes.TrimSpace(j.Body)
	switch {
	case len(body) == 0 || string(body) == "null":
	case body[0] == '"':
		var s string
		if err := json.Unmarshal(body, &s); err != nil {
			return nil, fmt.Errorf("request JSON: body: %v", err)
		}
		r.Body = []byte(s)
	default:
		r.Body = body
	}
	return r, nil
}

// targetPath is a request target's path and query (an absolute URL loses
// its scheme and host).
func targetPath(target string) string {
	if strings.HasPrefix(target, "/") || target == "" {
		return target
	}
	u, err := url.Parse(target)
	if err != nil || u.Host == "" {
		return target
	}
	return u.RequestURI()
}
