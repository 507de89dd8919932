package tracefile

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"unicode/utf8"
)

// Limits on what a trace file's JSON chunks may make a reader allocate. A
// chunk is at most maxChunk bytes, but JSON packs many values into few
// bytes — "{}," is three bytes and a 100-byte struct once decoded — so a
// small file could ask for gigabytes. Every array in a header, footer or
// summary chunk keeps at most maxJSONItems elements and every string at
// most maxJSONString bytes; what is cut is said (see clampJSON).
const (
	maxJSONItems  = 4096
	maxJSONString = 4096
	// maxNameLen bounds a process name as read from an event chunk: a
	// kernel keeps 16 bytes, macOS 32; a longer one was made, not traced.
	maxNameLen = 256
	// maxMetaChunk bounds a header or footer chunk: what a writer puts in
	// one — at most 64 devices per layer and a few hundred warnings — is
	// tens of kilobytes.
	maxMetaChunk = 16 << 20
)

// clampJSON rewrites a JSON document with every array cut to maxItems
// elements and every string to maxString bytes (at a UTF-8 boundary),
// reading it token by token so that nothing larger than one token is ever
// held; cut says whether anything was. Numbers are kept as written.
func clampJSON(raw []byte, maxItems, maxString int) (out []byte, cut bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var buf bytes.Buffer
	buf.Grow(min(len(raw), 1<<20))
	type level struct {
		array bool
		n     int  // elements (or keys) written
		key   bool // an object expects a key next
	}
	var stack []level
	skip := 0 // depth of a value being skipped (an array's extra element)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, cut, err
		}
		if skip > 0 {
			if d, ok := tok.(json.Delim); ok {
				if d == '[' || d == '{' {
					skip++
				} else {
					skip--
				}
			}
			if skip == 1 {
				// The skipped element ended; a scalar is skipped in one
				// token, a container when its delimiter closes.
				skip = 0
			}
			continue
		}
		d, isDelim := tok.(json.Delim)
		closing := isDelim && (d == ']' || d == '}')
		if !closing && len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.array {
				if top.n >= maxItems {
					cut = true
					if isDelim { // '[' or '{': skip to its end
						skip = 2
					}
					continue
				}
				if top.n > 0 {
					buf.WriteByte(',')
				}
				top.n++
			} else if top.key {
				if top.n > 0 {
					buf.WriteByte(',')
				}
				top.n++
				top.key = false
				k, _ := tok.(string)
				if len(k) > maxString {
					k, cut = truncUTF8(k, maxString), true
				}
				writeJSONString(&buf, k)
				buf.WriteByte(':')
				continue
			} else {
				top.key = true
			}
		}
		switch v := tok.(type) {
		case json.Delim:
			buf.WriteByte(byte(v))
			switch v {
			case '[':
				stack = append(stack, level{array: true})
			case '{':
				stack = append(stack, level{key: true})
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if len(v) > maxString {
				v, cut = truncUTF8(v, maxString), true
			}
			writeJSONString(&buf, v)
		case json.Number:
			buf.WriteString(string(v))
		case bool:
			buf.WriteString(strconv.FormatBool(v))
		case nil:
			buf.WriteString("null")
		}
	}
	return buf.Bytes(), cut, nil
}

func writeJSONString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s)
	buf.Write(b)
}

// truncUTF8 cuts s to at most n bytes without splitting a character.
func truncUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// errTooManyRows is a summary chunk with more rows than a writer puts in one.
var errTooManyRows = errors.New("malformed summary chunk: more rows than a chunk holds")

// decodeJSONBounded decodes a header or footer chunk into v after
// clampJSON; cut says whether it held more than the limits keep.
func decodeJSONBounded(raw []byte, v any) (cut bool, err error) {
	clamped, cut, err := clampJSON(raw, maxJSONItems, maxJSONString)
	if err != nil {
		return false, err
	}
	return cut, json.Unmarshal(clamped, v)
}
