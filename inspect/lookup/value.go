package lookup

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Kind is a JSON value's type.
type Kind uint8

// JSON kinds.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Value is a parsed JSON document that keeps what the libraries' hashes
// depend on and a map would lose: the order members were written in, and
// each number's literal (Python keeps integers exact).
type Value struct {
	Kind    Kind
	Bool    bool
	Lit     string // Number: the literal as written
	Str     string
	Items   []Value
	Members []Member
}

// Member is one name and value of an object, in the order written.
type Member struct {
	Name  string
	Value Value
}

// maxDepth bounds nesting, as JSON parsers of the libraries' runtimes do.
const maxDepth = 512

// ParseJSON parses one JSON document. A name written twice keeps its first
// position and its last value, as JSON.parse and Python's json.loads do.
func ParseJSON(data []byte) (Value, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := parseValue(d, 0)
	if err != nil {
		return Value{}, err
	}
	if _, err := d.Token(); err != io.EOF {
		return Value{}, errors.New("text after the JSON value")
	}
	return v, nil
}

func parseValue(d *json.Decoder, depth int) (Value, error) {
	if depth > maxDepth {
		return Value{}, errors.New("JSON nested too deep")
	}
	tok, err := d.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return Value{}, err
	}
	switch t := tok.(type) {
	case nil:
		return Value{Kind: Null}, nil
	case bool:
		return Value{Kind: Bool, Bool: t}, nil
	case json.Number:
		return Value{Kind: Number, Lit: string(t)}, nil
	case string:
		return Value{Kind: String, Str: t}, nil
	case json.Delim:
		if t == '[' {
			return parseArray(d, depth)
		}
		return parseObject(d, depth)
	}
	return Value{}, fmt.Errorf("unexpected %v", tok)
}

func parseArray(d *json.Decoder, depth int) (Value, error) {
	v := Value{Kind: Array, Items: []Value{}}
	for d.More() {
		item, err := parseValue(d, depth+1)
		if err != nil {
			return Value{}, err
		}
		v.Items = append(v.Items, item)
	}
	_, err := d.Token() // ]
	return v, err
}

func parseObject(d *json.Decoder, depth int) (Value, error) {
	v := Value{Kind: Object, Members: []Member{}}
	at := map[string]int{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return Value{}, err
		}
		name, _ := tok.(string)
		item, err := parseValue(d, depth+1)
		if err != nil {
			return Value{}, err
		}
		if i, ok := at[name]; ok {
			v.Members[i].Value = item
			continue
		}
		at[name] = len(v.Members)
		v.Members = append(v.Members, Member{Name: name, Value: item})
	}
	_, err := d.Token() // }
	return v, err
}

// Get is the member's value, ok=false when v is not an object or lacks it.
func (v Value) Get(name string) (Value, bool) {
	for _, m := range v.Members {
		if m.Name == name {
			return m.Value, true
		}
	}
	return Value{}, false
}
