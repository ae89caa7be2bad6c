package sitemap

import (
	"strings"
	"time"
)

// ParseLastMod parses a sitemap or feed date. It accepts every precision of
// the W3C Datetime profile (YYYY, YYYY-MM, YYYY-MM-DD, then hh:mm, hh:mm:ss
// and fractions of a second, with Z or an offset) and these real-world
// deviations: a space instead of T, no zone (read as UTC), an offset without
// colon (+0100) or without minutes (+01), and RFC 1123 / RFC 822 dates as
// feeds write them (with or without weekday, two- or four-digit year, named
// or numeric zone, or no zone). A date alone means midnight UTC. The result
// is in UTC. On failure it returns a *DateError (errors.Is ErrBadDate).
func ParseLastMod(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, ok := parseW3C([]byte(s)); ok {
		return t, nil
	}
	if t, ok := parseFeedDate(s); ok {
		return t, nil
	}
	return time.Time{}, newDateError(s)
}

func newDateError(s string) *DateError {
	if len(s) > 64 {
		s = s[:64]
	}
	return &DateError{Value: s}
}

// parseLastModBytes is ParseLastMod without allocating on the W3C path.
func parseLastModBytes(b []byte) (time.Time, error) {
	if t, ok := parseW3C(b); ok {
		return t, nil
	}
	s := string(b)
	if t, ok := parseFeedDate(s); ok {
		return t, nil
	}
	return time.Time{}, newDateError(s)
}

// digits reads n ASCII digits at b[i:].
func digits(b []byte, i, n int) (int, bool) {
	if i+n > len(b) {
		return 0, false
	}
	v := 0
	for _, c := range b[i : i+n] {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// parseW3C parses the W3C Datetime profile and its common deviations.
func parseW3C(b []byte) (time.Time, bool) {
	year, ok := digits(b, 0, 4)
	if !ok {
		return time.Time{}, false
	}
	month, day := 1, 1
	i := 4
	if i < len(b) {
		if b[i] != '-' {
			return time.Time{}, false
		}
		if month, ok = digits(b, i+1, 2); !ok {
			return time.Time{}, false
		}
		i += 3
		if i < len(b) {
			if b[i] != '-' {
				return time.Time{}, false
			}
			if day, ok = digits(b, i+1, 2); !ok {
				return time.Time{}, false
			}
			i += 3
		}
	}
	var hour, minute, sec, nsec int
	loc := time.UTC
	if i < len(b) {
		if b[i] != 'T' && b[i] != 't' && b[i] != ' ' {
			return time.Time{}, false
		}
		if hour, ok = digits(b, i+1, 2); !ok || i+3 >= len(b) || b[i+3] != ':' {
			return time.Time{}, false
		}
		if minute, ok = digits(b, i+4, 2); !ok {
			return time.Time{}, false
		}
		i += 6
		if i < len(b) && b[i] == ':' {
			if sec, ok = digits(b, i+1, 2); !ok {
				return time.Time{}, false
			}
			i += 3
			if i < len(b) && (b[i] == '.' || b[i] == ',') {
				i++
				start, scale := i, 100_000_000
				for i < len(b) && b[i] >= '0' && b[i] <= '9' {
					nsec += int(b[i]-'0') * scale
					scale /= 10
					i++
				}
				if i == start {
					return time.Time{}, false
				}
			}
		}
		for i < len(b) && b[i] == ' ' {
			i++
		}
		if i < len(b) {
			off, ok := parseOffset(b[i:])
			if !ok {
				return time.Time{}, false
			}
			if off != 0 {
				loc = time.FixedZone("", off)
			}
		}
	} else if month < 1 || month > 12 {
		return time.Time{}, false
	}
	if month < 1 || month > 12 || day < 1 || day > 31 || hour > 24 || minute > 59 || sec > 60 {
		return time.Time{}, false
	}
	if hour == 24 && (minute != 0 || sec != 0 || nsec != 0) {
		return time.Time{}, false
	}
	if sec == 60 { // a leap second: keep the instant just before
		sec, nsec = 59, 999_999_999
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, loc)
	if t.Day() != day && hour != 24 { // 2023-02-30 normalises to March: invalid
		return time.Time{}, false
	}
	return t.UTC(), true
}

// parseOffset parses Z, ±hh:mm, ±hhmm or ±hh; it returns seconds east of UTC.
func parseOffset(b []byte) (int, bool) {
	if len(b) == 1 && (b[0] == 'Z' || b[0] == 'z') {
		return 0, true
	}
	if len(b) == 3 && (b[0] == 'U' || b[0] == 'u') && (b[1] == 'T' || b[1] == 't') && (b[2] == 'C' || b[2] == 'c') {
		return 0, true
	}
	if len(b) < 3 || (b[0] != '+' && b[0] != '-') {
		return 0, false
	}
	h, ok := digits(b, 1, 2)
	if !ok {
		return 0, false
	}
	m := 0
	switch {
	case len(b) == 3:
	case len(b) == 5:
		if m, ok = digits(b, 3, 2); !ok {
			return 0, false
		}
	case len(b) == 6 && b[3] == ':':
		if m, ok = digits(b, 4, 2); !ok {
			return 0, false
		}
	default:
		return 0, false
	}
	if h > 23 || m > 59 {
		return 0, false
	}
	off := h*3600 + m*60
	if b[0] == '-' {
		off = -off
	}
	return off, true
}

// feedLayouts are tried in order for dates that are not W3C. They cover
// RFC 1123 / RFC 822 as written in RSS, with and without weekday, with
// two- or four-digit years, numeric or named zones, and no zone at all.
var feedLayouts = [...]string{
	time.RFC1123Z,                      // Mon, 02 Jan 2006 15:04:05 -0700
	time.RFC1123,                       // Mon, 02 Jan 2006 15:04:05 MST
	"Mon, 2 Jan 2006 15:04:05 -0700",   //
	"Mon, 2 Jan 2006 15:04:05 MST",     //
	time.RFC822Z,                       // 02 Jan 06 15:04 -0700
	time.RFC822,                        // 02 Jan 06 15:04 MST
	"Mon, 02 Jan 06 15:04:05 -0700",    //
	"Mon, 02 Jan 06 15:04:05 MST",      //
	"02 Jan 2006 15:04:05 -0700",       //
	"02 Jan 2006 15:04:05 MST",         //
	"02 Jan 06 15:04:05 -0700",         //
	"02 Jan 06 15:04:05 MST",           //
	"Mon, 02 Jan 2006 15:04 -0700",     //
	"Mon, 02 Jan 2006 15:04:05",        // no zone: UTC
	"02 Jan 2006 15:04:05",             //
	"02 Jan 06 15:04:05",               //
	"Mon, 02 Jan 06 15:04:05",          //
	"Monday, 02-Jan-06 15:04:05 MST",   // RFC 850
	"Mon Jan _2 15:04:05 MST 2006",     // ANSI C / UnixDate
	"2006-01-02 15:04:05 -0700",        //
	"2006-01-02 15:04:05 -0700 MST",    //
	"Mon, 02 Jan 2006 15:04:05 -07:00", //
}

func parseFeedDate(s string) (time.Time, bool) {
	if len(s) < 8 || len(s) > 64 {
		return time.Time{}, false
	}
	for _, layout := range feedLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
