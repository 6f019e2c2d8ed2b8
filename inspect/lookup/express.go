package lookup

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/idemctl/idemctl/inspect"
)

// LibExpressIdempotency is express-idempotency: no fingerprint; the
// stored request is compared with the retry.
const LibExpressIdempotency = "express-idempotency"

// Compared is what express-idempotency's default intent validator
// compares: the url (path and query as sent) and the method exactly, the
// parsed query and body with deep-equal's loose equality.
type Compared struct {
	Method string `json:"method"`
	URL    string `json:"url"`
	Query  any    `json:"query"`
	Body   any    `json:"body,omitempty"`
}

// deriveExpress keys a record by the raw Idempotency-Key (the schema's
// template) and keeps the request's compared parts for the verdict.
func deriveExpress(ks *inspect.Keyspace, in Inputs) (*Derivation, error) {
	d := &Derivation{Library: LibExpressIdempotency}
	if err := templateKey(d, ks, in); err != nil {
		return nil, err
	}
	r := in.Request
	if r == nil {
		d.note("no request given: the stored request is not compared")
		return d, nil
	}
	c := &Compared{Method: r.Method, URL: r.Path, Query: queryOf(r.Path)}
	if r.Body != nil {
		body, err := ParseJSON(r.Body)
		if err != nil {
			return nil, need("keyspace %s (%s) compares the JSON body: the request's body is not JSON: %v", ks.Name, LibExpressIdempotency, err)
		}
		c.Body = toAny(body)
		d.use("body", string(r.Body), "request")
	}
	d.use("method", r.Method, "request")
	d.use("url", r.Path, "request")
	d.Request = c
	return d, nil
}

// queryOf is the query as express parses a flat one: a name once is a
// string, a name repeated a list. (Bracketed names, which qs nests, are
// kept flat.)
func queryOf(target string) map[string]any {
	out := map[string]any{}
	_, q, ok := strings.Cut(target, "?")
	if !ok {
		return out
	}
	vals, _ := url.ParseQuery(q)
	for name, vs := range vals {
		if len(vs) == 1 {
			out[name] = vs[0]
			continue
		}
		list := make([]any, len(vs))
		for i, v := range vs {
			list[i] = v
		}
		out[name] = list
	}
	return out
}

// storedRequest is the request express-idempotency stored in the record.
func storedRequest(value string) (*Compared, error) {
	var doc struct {
		Request *struct {
			Method string          `json:"method"`
			URL    string          `json:"url"`
			Query  json.RawMessage `json:"query"`
			Body   json.RawMessage `json:"body"`
		} `json:"request"`
	}
	if err := json.Unmarshal([]byte(value), &doc); err != nil || doc.Request == nil {
		return nil, fmt.Errorf("the record holds no request")
	}
	c := &Compared{Method: doc.Request.Method, URL: doc.Request.URL}
	for _, part := range []struct {
		raw json.RawMessage
		to  *any
	}{{doc.Request.Query, &c.Query}, {doc.Request.Body, &c.Body}} {
		if len(part.raw) == 0 {
			continue
		}
		v, err := ParseJSON(part.raw)
		if err != nil {
			return nil, err
		}
		*part.to = toAny(v)
	}
	return c, nil
}
