package boltjournal

import (
	"encoding/json"
	"strconv"
)

// appendJSON appends r as encoding/json marshals it, byte for byte,
// without its reflection: a queued URL's record is written for every link
// a crawl queues.
func (r record) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"u":`...)
	dst = appendJSONString(dst, r.URL)
	if r.Key != "" {
		dst = append(dst, `,"k":`...)
		dst = appendJSONString(dst, r.Key)
	}
	if r.Depth != 0 {
		dst = append(dst, `,"d":`...)
		dst = strconv.AppendInt(dst, int64(r.Depth), 10)
	}
	if r.From != "" {
		dst = append(dst, `,"f":`...)
		dst = appendJSONString(dst, r.From)
	}
	if r.Tries != 0 {
		dst = append(dst, `,"t":`...)
		dst = strconv.AppendInt(dst, int64(r.Tries), 10)
	}
	dst = append(dst, `,"s":`...)
	dst = strconv.AppendUint(dst, r.Seq, 10)
	return append(dst, '}')
}

// appendJSONString appends s as a JSON string, as encoding/json writes it:
// printable ASCII that needs no escape (a normalised URL's bytes) as it
// is, anything else through encoding/json itself.
func appendJSONString(dst []byte, s string) []byte {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
