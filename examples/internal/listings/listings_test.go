package listings

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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
	if !strings.Contains(err.Error(), "line 5: schedule \"hourly\"") {
		t.Errorf("message %q", err)
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
