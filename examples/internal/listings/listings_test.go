package listings

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	_ "time/tzdata" // Europe/London on a machine without a zone database

	bolt "go.etcd.io/bbolt"
)

func TestParseCSV(t *testing.T) {
	in := "listing_url,backlink,directory,schedule\n" +
		"http://biz.test/links,https://dir.test/l/1,dir.test,weekly\n" +
		"# a comment\n" +
		"ftp://biz.test/x,https://dir.test/l/2,dir.test,daily\n" +
		"http://biz.test/y,https://dir.test/l/3,dir.test,hourly\n" +
		"http://biz.test/z,https://dir.test/l/4\n" +
		"\"http://biz.test/q\",https://dir.test/l/5,Other.Test,MONTHLY\n"
	got, err := Parse(strings.NewReader(in), "l.csv")
	if len(got) != 2 || got[0].Line != 2 || got[1].Line != 7 || got[1].Directory != "other.test" || got[1].Schedule != Monthly {
		t.Fatalf("got %+v", got)
	}
	var fe *FileError
	if !errors.As(err, &fe) || !errors.Is(err, ErrMalformed) {
		t.Fatalf("err %v", err)
	}
	var lines []int
	for _, r := range fe.Rows {
		lines = append(lines, r.Line)
	}
	if len(lines) != 3 || lines[0] != 4 || lines[1] != 5 || lines[2] != 6 {
		t.Errorf("bad lines %v\n%v", lines, err)
	}
	for _, msg := range []string{"line 5: schedule \"hourly\"", "line 6: 2 fields, want 4"} {
		if !strings.Contains(err.Error(), msg) {
			t.Errorf("message %q lacks %q", err, msg)
		}
	}
}

// A line that is not a CSV record (a quote left open, a stray quote) is
// named by its own line number, and the rows before and after it are read:
// a quoted field never spans lines.
func TestParseCSV_BadQuoteSpoilsOneLine(t *testing.T) {
	const head = "listing_url,backlink,directory,schedule\n"
	row := func(n int) string {
		return fmt.Sprintf("http://biz.test/%d,https://dir.test/l/%d,dir.test,weekly\n", n, n)
	}
	tests := []struct {
		name, in string
		good     []int // lines of the listings read
		bad      []int // lines named as malformed
	}{
		{"open quote", head + row(2) + "\"http://biz.test/x,https://dir.test/l/x,dir.test,weekly\n" + row(4) + row(5), []int{2, 4, 5}, []int{3}},
		{"open quote last", head + row(2) + row(3) + "\"http://biz.test/x,https://dir.test/l/x,dir.test,weekly\n", []int{2, 3}, []int{4}},
		{"two open quotes", head + "\"a,b,c,d\n" + row(3) + "\"e,f,g,h\n" + row(5), []int{3, 5}, []int{2, 4}},
		{"stray quote", head + row(2) + "http://biz.test/a\"b,https://dir.test/l/x,dir.test,weekly\n" + row(4), []int{2, 4}, []int{3}},
		{"quote closed later", head + "\"http://biz.test/x,https://dir.test/l/x\n" + "still\",dir.test,weekly\n" + row(4), []int{4}, []int{2, 3}},
		{"crlf", strings.ReplaceAll(head+row(2)+"\"x,y\n"+row(4), "\n", "\r\n"), []int{2, 4}, []int{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tt.in), "l.csv")
			var good []int
			for _, l := range got {
				good = append(good, l.Line)
			}
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("err %v, want a *FileError", err)
			}
			var bad []int
			for _, r := range fe.Rows {
				bad = append(bad, r.Line)
				if !strings.Contains(r.Error(), fmt.Sprintf("listings: line %d: ", r.Line)) {
					t.Errorf("message %q", r)
				}
			}
			if !slices.Equal(good, tt.good) || !slices.Equal(bad, tt.bad) {
				t.Errorf("listings on lines %v, malformed %v; want %v and %v\n%v", good, bad, tt.good, tt.bad, err)
			}
		})
	}
}

func TestParseCSVHeader(t *testing.T) {
	for _, in := range []string{"url,backlink\nhttp://a/,http://b/\n", "\n\n"} {
		got, err := Parse(strings.NewReader(in), "x.csv")
		if len(got) != 0 {
			t.Errorf("%q: got %v", in, got)
		}
		if strings.TrimSpace(in) != "" && err == nil {
			t.Errorf("%q: no error", in)
		}
	}
	// Columns in another order are fine.
	got, err := Parse(strings.NewReader("schedule,directory,backlink,listing_url\ndaily,d.test,http://d.test/,http://b.test/\n"), "x.csv")
	if err != nil || len(got) != 1 || got[0].URL != "http://b.test/" || got[0].Schedule != Daily {
		t.Errorf("reordered: %v %v", got, err)
	}
}

func TestParseJSON(t *testing.T) {
	in := `[
  {"listing_url": "http://biz.test/a", "backlink": "https://dir.test/1", "directory": "dir.test", "schedule": "daily"},
  {"listing_url": "http://biz.test/b", "backlink": "https://dir.test/2", "directory": "dir.test", "schedule": "yearly"},
  {"listing_url": "http://biz.test/c", "backlink": "https://dir.test/3", "directory": "dir.test", "schedule": "weekly", "extra": 1},
  {"listing_url": "http://biz.test/d", "backlink": "https://dir.test/4", "directory": "dir.test", "schedule": "weekly"}
]`
	got, err := Parse(strings.NewReader(in), "l.json")
	if len(got) != 2 || got[0].Line != 2 || got[1].Line != 5 {
		t.Fatalf("got %+v", got)
	}
	var fe *FileError
	if !errors.As(err, &fe) || len(fe.Rows) != 2 || fe.Rows[0].Line != 3 || fe.Rows[1].Line != 4 {
		t.Fatalf("err %v", err)
	}
	// Broken JSON midway keeps the rows before it.
	got, err = Parse(strings.NewReader(`[{"listing_url":"http://a.test/","backlink":"http://d.test/","directory":"d.test","schedule":"daily"},
{"listing_url": oops}]`), "l.json")
	if len(got) != 1 || !errors.As(err, &fe) || fe.Rows[0].Line != 2 {
		t.Errorf("broken: %v %v", got, err)
	}
	// Spaces before a line break: the row is on the line after it.
	got, err = Parse(strings.NewReader("[{\"listing_url\":\"http://a.test/\",\"backlink\":\"http://d.test/\",\"directory\":\"d.test\",\"schedule\":\"daily\"}, \t\r\n"+
		` {"listing_url":"http://b.test/","backlink":"http://d.test/","directory":"d.test","schedule":"yearly"}]`), "l.json")
	if len(got) != 1 || !errors.As(err, &fe) || len(fe.Rows) != 1 || fe.Rows[0].Line != 2 {
		t.Errorf("spaces before a line break: %v %v", got, err)
	}
	if _, err := Parse(strings.NewReader(`{"a":1}`), "l.json"); err == nil {
		t.Error("object accepted")
	}
}

// D12: each listing is checked on its schedule.
func TestDue_D12(t *testing.T) {
	last := time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		s    Schedule
		now  time.Time
		want bool
	}{
		{Daily, last.Add(23 * time.Hour), false},
		{Daily, last.Add(24 * time.Hour), true},
		{Weekly, last.AddDate(0, 0, 6), false},
		{Weekly, last.AddDate(0, 0, 7), true},
		{Monthly, last.AddDate(0, 0, 27), false},
		{Monthly, last.AddDate(0, 1, 0).Add(-time.Nanosecond), false},
		{Monthly, last.AddDate(0, 1, 0), true},
	}
	for _, tt := range tests {
		l := Listing{Schedule: tt.s}
		if got := l.Due(last, tt.now); got != tt.want {
			t.Errorf("%v due at %v: %v, want %v", tt.s, tt.now, got, tt.want)
		}
	}
	if !(Listing{}).Due(time.Time{}, last) {
		t.Error("never-checked listing not due")
	}
	// A last check dated later than now (a clock that was ahead, a damaged
	// record) is due, a second ahead or years; one dated now is not.
	for _, ahead := range []time.Duration{time.Second, time.Hour, 24 * 365 * time.Hour} {
		if !(Listing{Schedule: Weekly}).Due(last.Add(ahead), last) {
			t.Errorf("a listing last checked %v after now is not due", ahead)
		}
	}
	if (Listing{Schedule: Weekly}).Due(last, last) {
		t.Error("a listing checked just now is due")
	}
}

func TestParseBlockList(t *testing.T) {
	got, err := ParseBlockList(strings.NewReader("# blocked\nEvil.Test.\n\n  spam.test # owner asked\n"))
	if err != nil || strings.Join(got, ",") != "evil.test,spam.test" {
		t.Errorf("got %v %v", got, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("listing_url,backlink,directory,schedule\nhttp://a/,http://b/,c,daily\n")
	f.Add(`[{"listing_url":"http://a/","backlink":"http://b/","directory":"c","schedule":"weekly"}]`)
	f.Add("listing_url,backlink,directory,schedule\n\"http://a/,http://b/,c,daily\nhttp://a/,http://b/,c,daily\n")
	f.Fuzz(func(t *testing.T, s string) {
		ls, err := Parse(strings.NewReader(s), "fuzz")
		var fe *FileError
		if errors.As(err, &fe) {
			for _, r := range fe.Rows {
				if r.Line < 1 {
					t.Fatalf("row error without a line: %v", r)
				}
			}
		}
		read := map[int]bool{}
		for _, l := range ls {
			if l.URL == "" || l.Backlink == "" || l.Directory == "" || l.Line < 1 {
				t.Fatalf("bad listing %+v", l)
			}
			read[l.Line] = true
		}
		if fe != nil {
			for _, r := range fe.Rows {
				if read[r.Line] {
					t.Fatalf("line %d is both a listing and malformed: %v", r.Line, r)
				}
			}
		}
	})
}

func TestStore_D6(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "s.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := &Store{DB: db}
	if _, ok, err := s.Get(Key("d.test", "http://a.test/")); ok || err != nil {
		t.Fatalf("empty store: %v %v", ok, err)
	}
	r := Record{Listing: "http://a.test/", Directory: "d.test", Outcome: Verified, Status: 200, Matched: "https://d.test/l/1", Checked: time.Unix(100, 0).UTC()}
	if err := s.Put(r); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Get(Key("d.test", "http://a.test/"))
	if !ok || err != nil || got != r {
		t.Errorf("got %+v %v %v", got, ok, err)
	}
	db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("directoriesbot/listings")).Put([]byte("bad"), []byte("{"))
	})
	if _, _, err := s.Get("bad"); err == nil {
		t.Error("garbage record decoded")
	}
	if all, err := s.All(); err != nil || len(all) != 1 {
		t.Errorf("all %v %v", all, err)
	}
}

func TestParseSchedule(t *testing.T) {
	for in, want := range map[string]Schedule{"daily": Daily, " Daily ": Daily, "WEEKLY": Weekly, "monthly\t": Monthly} {
		if got, err := ParseSchedule(in); err != nil || got != want {
			t.Errorf("ParseSchedule(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "hourly", "day"} {
		if _, err := ParseSchedule(in); err == nil {
			t.Errorf("ParseSchedule(%q) accepted", in)
		}
	}
}

// D12: a daily listing is due the next calendar day at the same clock time,
// also across a daylight-saving change.
func TestDue_DailyIsACalendarDay(t *testing.T) {
	loc, err := time.LoadLocation("Europe/London")
	if err != nil {
		t.Fatal(err)
	}
	last := time.Date(2026, 3, 28, 12, 0, 0, 0, loc) // clocks go forward on the 29th
	if got, want := Daily.Next(last), time.Date(2026, 3, 29, 12, 0, 0, 0, loc); !got.Equal(want) {
		t.Errorf("Daily.Next(%v) = %v, want %v", last, got, want)
	}
}

// Every row is checked field by field; a bad one is named by its line with
// why, and the good ones around it are read. Fields may have spaces after
// the commas, quoted or not; the header's names are matched in any case.
func TestParseCSV_Rows(t *testing.T) {
	const head = "listing_url,backlink,directory,schedule\n"
	for _, c := range []struct {
		name, row, why string // why: "" when the row is a listing
	}{
		{"spaces", "http://biz.test/a, https://dir.test/1 , dir.test , daily", ""},
		{"quoted after space", `http://biz.test/a, "https://dir.test/1", "dir.test", daily`, ""},
		{"no backlink", "http://biz.test/a,,dir.test,daily", "backlink is empty"},
		{"ftp backlink", "http://biz.test/a,ftp://dir.test/1,dir.test,daily", `backlink "ftp://dir.test/1" is not an http(s) URL`},
		{"no host", "http:/biz.test/a,https://dir.test/1,dir.test,daily", `listing_url "http:/biz.test/a" is not an http(s) URL`},
		{"blank directory", "http://biz.test/a,https://dir.test/1, ,daily", "directory is empty"},
		{"directory with a space", "http://biz.test/a,https://dir.test/1,dir test,daily", `directory "dir test" is not a domain name`},
		{"directory with a slash", "http://biz.test/a,https://dir.test/1,dir.test/x,daily", "is not a domain name"},
		{"directory with a semicolon", "http://biz.test/a,https://dir.test/1,dir.test;x,daily", "is not a domain name"},
		{"stray quote", `http://biz.test/a"b,https://dir.test/1,dir.test,daily`, `column 18: bare " in non-quoted-field`},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, h := range []string{head, "Listing_URL, Backlink, DIRECTORY, Schedule\n"} {
				got, err := Parse(strings.NewReader(h+c.row+"\n"), "l.csv")
				if c.why == "" {
					if err != nil || len(got) != 1 || got[0].Directory != "dir.test" || got[0].Backlink != "https://dir.test/1" {
						t.Errorf("%q: %+v %v", c.row, got, err)
					}
					continue
				}
				var fe *FileError
				if len(got) != 0 || !errors.As(err, &fe) || len(fe.Rows) != 1 || fe.Rows[0].Line != 2 ||
					!strings.Contains(fe.Rows[0].Error(), c.why) {
					t.Errorf("%q: %+v %v; want line 2 malformed: %s", c.row, got, err, c.why)
				}
			}
		})
	}
}

// A file that cannot be read as a whole is refused with an error that is
// not a *FileError, saying why.
func TestParse_Refused(t *testing.T) {
	for _, c := range []struct{ name, in, why string }{
		{"missing column", "url,backlink\nhttp://a/,http://b/\n", `line 1: header must be listing_url,backlink,directory,schedule (missing "listing_url")`},
		{"bad header quote", "\"listing_url,backlink,directory,schedule\nlisting_url,backlink,directory,schedule\nhttp://a.test/,http://b.test/,d.test,daily\n", "line 1: header: column "},
		{"comments only", "# no listings yet\n\n", "no header line"},
		{"JSON object", `{"listing_url": "http://a.test/"}`, "line 1: JSON listings must be an array of objects"},
		{"JSON string", `"x"`, "line 1: header must be"}, // not an array: read as CSV
	} {
		got, err := Parse(strings.NewReader(c.in), "l")
		var fe *FileError
		if len(got) != 0 || err == nil || errors.As(err, &fe) || !strings.Contains(err.Error(), "listings: l: "+c.why) {
			t.Errorf("%s: %v %v; want %q", c.name, got, err, c.why)
		}
	}
	// An empty or blank file holds no listings and is no error.
	for _, in := range []string{"", "\n \n", "\ufeff"} {
		if got, err := Parse(strings.NewReader(in), "l"); got != nil || err != nil {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
}

// A header naming a column twice leaves a four-field row short of the
// last one: malformed, not a panic.
func TestParseCSV_DuplicateColumn(t *testing.T) {
	in := "listing_url,backlink,directory,schedule,schedule\nhttp://a.test/,http://b.test/,d.test,daily\nhttp://a.test/,http://b.test/,d.test,daily,daily\n"
	got, err := Parse(strings.NewReader(in), "l.csv")
	var fe *FileError
	if len(got) != 1 || got[0].Line != 3 || !errors.As(err, &fe) || len(fe.Rows) != 1 || fe.Rows[0].Line != 2 {
		t.Errorf("%+v %v", got, err)
	}
}

// A byte order mark (as spreadsheet exports write) is not part of the
// header or of the JSON.
func TestParse_ByteOrderMark(t *testing.T) {
	for _, in := range []string{
		"\ufefflisting_url,backlink,directory,schedule\nhttp://a.test/,http://b.test/,d.test,daily\n",
		"\ufeff" + `[{"listing_url":"http://a.test/","backlink":"http://b.test/","directory":"d.test","schedule":" Daily "}]`,
	} {
		got, err := Parse(strings.NewReader(in), "l")
		if err != nil || len(got) != 1 || got[0].Line != 1+strings.Count(in[:strings.Index(in, "http")], "\n") || got[0].Schedule != Daily {
			t.Errorf("%q: %+v %v", in, got, err)
		}
	}
}

// A file of MaxBytes is read; one byte more is refused.
func TestParse_MaxBytes(t *testing.T) {
	const head = "listing_url,backlink,directory,schedule\nhttp://a.test/,http://b.test/,d.test,daily\n"
	file := func(n int) io.Reader {
		return io.MultiReader(strings.NewReader(head), io.LimitReader(spaces{}, int64(n-len(head))))
	}
	if got, err := Parse(file(MaxBytes), "l.csv"); err != nil || len(got) != 1 {
		t.Errorf("MaxBytes: %d listings, %v", len(got), err)
	}
	if got, err := Parse(file(MaxBytes+1), "l.csv"); err == nil || got != nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("MaxBytes+1: %d listings, %v", len(got), err)
	}
}

// spaces reads as endless blanks.
type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// A row error matches ErrMalformed and its cause, nothing else.
func TestRowError_Is(t *testing.T) {
	_, err := Parse(strings.NewReader("listing_url,backlink,directory,schedule\nhttp://a.test/,http://b.test/,d.test,hourly\n"), "l.csv")
	if !errors.Is(err, ErrMalformed) || errors.Is(err, io.EOF) || errors.Is(err, errors.New("listings: malformed row")) {
		t.Errorf("%v", err)
	}
}

func TestParseBlockList_ReadError(t *testing.T) {
	got, err := ParseBlockList(io.MultiReader(strings.NewReader("a.test\n"), iotest.ErrReader(io.ErrUnexpectedEOF)))
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.HasPrefix(err.Error(), "listings: block list: ") || len(got) != 1 {
		t.Errorf("%v %v", got, err)
	}
}

// The state file's records: the key of a listing and the JSON of a record
// are what earlier runs wrote, and what -list prints.
func TestStore_Format(t *testing.T) {
	if k := Key("d.test", "http://a.test/"); k != "d.test http://a.test/" {
		t.Errorf("Key = %q", k)
	}
	r := Record{Listing: "http://a.test/", Backlink: "https://d.test/l/1", Directory: "d.test", Checked: time.Unix(100, 0).UTC(),
		Outcome: LinkMissing, FetchedAs: "https://a.test/", Status: 200, Matched: "https://d.test/l/1", Detail: "x"}
	b, err := json.Marshal(r)
	want := `{"listing_url":"http://a.test/","backlink":"https://d.test/l/1","directory":"d.test","checked":"1970-01-01T00:01:40Z",` +
		`"outcome":"link_missing","fetched_url":"https://a.test/","status":200,"matched_link":"https://d.test/l/1","detail":"x"}`
	if err != nil || string(b) != want {
		t.Errorf("record JSON\n%s\nwant\n%s", b, want)
	}
	if Verified != "verified" || LinkMissing != "link_missing" || Unverified != "unverified" || Error != "error" {
		t.Error("outcome names changed")
	}
}

// A store whose bucket exists does not find a key it does not hold.
func TestStore_GetMissing(t *testing.T) {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "s.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := &Store{DB: db, Bucket: "b"}
	if err := s.Put(Record{Listing: "http://a.test/", Directory: "d.test"}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Get(Key("d.test", "http://other.test/")); ok || err != nil {
		t.Errorf("missing key: %v %v", ok, err)
	}
}
