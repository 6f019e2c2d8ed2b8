package lookup

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"

	jmespath "github.com/jmespath-community/go-jmespath"
)

// powertoolsFunctions are the JMESPath functions Powertools adds to every
// search (its PowertoolsFunctions): powertools_json parses a JSON string,
// powertools_base64 decodes base64 text, powertools_base64_gzip decodes
// then gunzips it.
// With lits, powertools_json keeps numbers as written (Python).
func powertoolsFunctions(lits bool) []jmespath.FunctionEntry {
	return []jmespath.FunctionEntry{
		unary("powertools_json", func(s string) (any, error) {
			v, err := ParseJSON([]byte(s))
			if err != nil {
				return nil, fmt.Errorf("powertools_json: %v", err)
			}
			return toAny(v, lits), nil
		}),
		unary("powertools_base64", powertoolsBase64),
		unary("powertools_base64_gzip", powertoolsBase64Gzip),
	}
}

func powertoolsBase64(s string) (any, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("powertools_base64: %v", err)
	}
	return string(b), nil
}

func powertoolsBase64Gzip(s string) (any, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("powertools_base64_gzip: %v", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("powertools_base64_gzip: %v", err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxRequest+1))
	if err != nil || len(out) > maxRequest {
		return nil, fmt.Errorf("powertools_base64_gzip: %v", err)
	}
	return string(out), nil
}

func unary(name string, f func(string) (any, error)) jmespath.FunctionEntry {
	return jmespath.FunctionEntry{
		Name:      name,
		Arguments: []jmespath.ArgSpec{{Types: []jmespath.JpType{jmespath.JpString}}},
		Handler: func(args []any) (any, error) {
			s, _ := args[0].(string)
			return f(s)
		},
	}
}
