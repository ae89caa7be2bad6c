package boltstate

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// The redo log of a State: two files beside the bbolt file, PATH-wal.a and
// PATH-wal.b. One is active: every write is appended to it as one record
// and acknowledged once the file is synced. The other holds the writes of
// the last checkpoint while they are applied to the bbolt file, then it is
// emptied. Each file starts with a header (magic, generation); a file's
// generation orders it when both hold records after a crash. A record is
// a length, a CRC-32C of the payload and the payload: the changes of one
// write (puts, deletes, sequences, dropped buckets), applied all or not at
// all. The length has a checksum of its own, so that a damaged length is
// not taken for a record cut short by a crash.

// LogSuffixes are the suffixes of the two redo-log files a [State] keeps
// beside its bbolt file (see the package doc).
var LogSuffixes = [2]string{"-wal.a", "-wal.b"}

const (
	logMagic      = "goodbot-wal\x00v1\n" // 15 bytes, then the generation (u64) and its CRC-32C (u32)
	logHeaderSize = len(logMagic) + 8 + 4
	recHeaderSize = 12      // payload length u32, CRC-32C of the length u32, CRC-32C of the payload u32 (little-endian)
	maxRecordSize = 1 << 28 // 256 MiB: a longer length is damage
)

// Change kinds in a record.
const (
	opPut byte = 1 + iota
	opDelete
	opSequence
	opDropBucket
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// change is one change of a write.
type change struct {
	kind   byte
	bucket string
	key    string
	val    []byte // opPut
	seq    uint64 // opSequence
}

// appendRecord appends the record of changes to dst.
func appendRecord(dst []byte, changes []change) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, recHeaderSize)...)
	for _, c := range changes {
		dst = append(dst, c.kind)
		dst = appendString(dst, c.bucket)
		switch c.kind {
		case opPut:
			dst = appendString(dst, c.key)
			dst = binary.AppendUvarint(dst, uint64(len(c.val)))
			dst = append(dst, c.val...)
		case opDelete:
			dst = appendString(dst, c.key)
		case opSequence:
			dst = binary.AppendUvarint(dst, c.seq)
		}
	}
	payload := dst[start+recHeaderSize:]
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(dst[start+4:], crc32.Checksum(dst[start:start+4], castagnoli))
	binary.LittleEndian.PutUint32(dst[start+8:], crc32.Checksum(payload, castagnoli))
	return dst
}

// recordSize is the length of the payload appendRecord writes for changes.
func recordSize(changes []change) int {
	n := 0
	str := func(s string) int { return uvarintLen(uint64(len(s))) + len(s) }
	for _, c := range changes {
		n += 1 + str(c.bucket)
		switch c.kind {
		case opPut:
			n += str(c.key) + uvarintLen(uint64(len(c.val))) + len(c.val)
		case opDelete:
			n += str(c.key)
		case opSequence:
			n += uvarintLen(c.seq)
		}
	}
	return n
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// errBadRecord is a payload that does not decode.
var errBadRecord = errors.New("undecodable record")

// decodeRecord returns the changes of a record's payload.
func decodeRecord(p []byte) ([]change, error) {
	var out []change
	str := func() (string, bool) {
		n, w := binary.Uvarint(p)
		if w <= 0 || n > uint64(len(p)-w) {
			return "", false
		}
		s := string(p[w : w+int(n)])
		p = p[w+int(n):]
		return s, true
	}
	for len(p) > 0 {
		c := change{kind: p[0]}
		p = p[1:]
		var ok bool
		if c.bucket, ok = str(); !ok || c.bucket == "" {
			return nil, errBadRecord
		}
		switch c.kind {
		case opPut:
			if c.key, ok = str(); !ok || c.key == "" {
				return nil, errBadRecord
			}
			var v string
			if v, ok = str(); !ok {
				return nil, errBadRecord
			}
			c.val = []byte(v)
		case opDelete:
			if c.key, ok = str(); !ok || c.key == "" {
				return nil, errBadRecord
			}
		case opSequence:
			n, w := binary.Uvarint(p)
			if w <= 0 {
				return nil, errBadRecord
			}
			c.seq, p = n, p[w:]
		case opDropBucket:
		default:
			return nil, errBadRecord
		}
		out = append(out, c)
	}
	return out, nil
}

// LogError says where and why a redo-log file is damaged: the records
// before Offset were replayed, none after it; the file was copied to
// KeptAs (empty for a read-only state, which changes nothing). It matches
// [ErrCorrupt].
type LogError struct {
	Path   string
	Offset int64
	Reason string
	KeptAs string
}

func (e *LogError) Error() string {
	return fmt.Sprintf("boltstate: log %s is damaged at byte %d: %s", e.Path, e.Offset, e.Reason)
}

// Is reports whether target is [ErrCorrupt].
func (e *LogError) Is(target error) bool { return target == ErrCorrupt }

// logRead is what reading one log file found.
type logRead struct {
	gen     uint64
	records [][]change
	torn    int64     // bytes of an incomplete last record (a write cut by a crash)
	damage  *LogError // nil unless the file is damaged
}

// readLog reads the log file at path (absent or shorter than its header:
// no records). Reading stops at the first record that is damaged or
// incomplete.
func readLog(path string) (logRead, error) {
	var r logRead
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("boltstate: log: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	head := make([]byte, logHeaderSize)
	n, err := io.ReadFull(br, head)
	switch {
	case n == 0 || errors.Is(err, io.ErrUnexpectedEOF):
		return r, nil // created, or emptied, and cut before its header was written: no record
	case err != nil:
		return r, fmt.Errorf("boltstate: log %s: %w", path, err)
	case string(head[:len(logMagic)]) != logMagic:
		r.damage = &LogError{Path: path, Reason: "not a goodbot redo log (bad header)"}
		return r, nil
	}
	gen := head[len(logMagic) : len(logMagic)+8]
	if crc32.Checksum(gen, castagnoli) != binary.LittleEndian.Uint32(head[len(logMagic)+8:]) {
		r.damage = &LogError{Path: path, Offset: int64(len(logMagic)), Reason: "checksum mismatch in the header"}
		return r, nil
	}
	r.gen = binary.LittleEndian.Uint64(gen)
	off := int64(logHeaderSize)
	hdr := make([]byte, recHeaderSize)
	var payload []byte
	for {
		n, err := io.ReadFull(br, hdr)
		if err == io.EOF {
			return r, nil
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			r.torn = int64(n)
			return r, nil
		}
		if err != nil {
			return r, fmt.Errorf("boltstate: log %s: %w", path, err)
		}
		size := binary.LittleEndian.Uint32(hdr)
		if crc32.Checksum(hdr[:4], castagnoli) != binary.LittleEndian.Uint32(hdr[4:]) {
			// Checked on its own, a length that runs past the end of the
			// file is a write cut short, not a damaged length.
			r.damage = &LogError{Path: path, Offset: off, Reason: "checksum mismatch in a record's length"}
			return r, nil
		}
		if size == 0 || size > maxRecordSize {
			r.damage = &LogError{Path: path, Offset: off, Reason: fmt.Sprintf("record length %d", size)}
			return r, nil
		}
		if cap(payload) < int(size) {
			payload = make([]byte, size)
		}
		payload = payload[:size]
		got, err := io.ReadFull(br, payload)
		if errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF {
			r.torn = int64(recHeaderSize + got)
			return r, nil
		}
		if err != nil {
			return r, fmt.Errorf("boltstate: log %s: %w", path, err)
		}
		if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(hdr[8:]) {
			r.damage = &LogError{Path: path, Offset: off, Reason: "checksum mismatch"}
			return r, nil
		}
		changes, err := decodeRecord(payload)
		if err != nil {
			r.damage = &LogError{Path: path, Offset: off, Reason: err.Error()}
			return r, nil
		}
		r.records = append(r.records, changes)
		off += int64(recHeaderSize) + int64(size)
	}
}

// logFile is one of the two files of the log.
type logFile struct {
	path string
	f    *os.File
	gen  uint64
}

// reset empties the file and starts it at generation gen, synced.
func (l *logFile) reset(gen uint64) error {
	if err := l.f.Truncate(0); err != nil {
		return err
	}
	head := binary.LittleEndian.AppendUint64([]byte(logMagic), gen)
	head = binary.LittleEndian.AppendUint32(head, crc32.Checksum(head[len(logMagic):], castagnoli))
	if _, err := l.f.WriteAt(head, 0); err != nil {
		return err
	}
	if _, err := l.f.Seek(int64(len(head)), io.SeekStart); err != nil {
		return err
	}
	l.gen = gen
	return l.f.Sync()
}

// logWriter appends records to the active file with group commit: a
// flusher goroutine writes every record appended since its last write in
// one write and syncs the file, then wakes the writers of those records
// (each waits for its own batch, once). The records that arrive while one
// sync runs share the next, and syncs start at most every 8 ms
// (syncEvery): a writer alone is not delayed, a crowd shares its syncs.
type logWriter struct {
	mu     sync.Mutex // guards the fields below
	active *logFile
	buf    []byte // records appended and not yet written
	spare  []byte
	cur    *logBatch // the batch of the records in buf
	inward *logBatch // the batch being written and synced (nil: none)
	err    error     // sticky: a failed write or sync fails every later one

	beforeSync func() // tests: runs in a flush between its write and its sync
	syncs      uint64 // file syncs so far

	kick chan struct{} // records wait in buf
	stop chan struct{}
	done chan struct{} // the flusher returned
}

// logBatch is the records of one write and sync: done is closed once they
// are durable, or err says why not.
type logBatch struct {
	done    chan struct{}
	err     error
	records int
}

func newLogWriter(active *logFile) *logWriter {
	w := &logWriter{active: active, cur: &logBatch{done: make(chan struct{})},
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go w.flusher()
	return w
}

// append adds the record of changes and returns its batch, for wait.
func (w *logWriter) append(changes []change) (*logBatch, error) {
	w.mu.Lock()
	if w.err != nil {
		w.mu.Unlock()
		return nil, w.err
	}
	w.buf = appendRecord(w.buf, changes)
	b := w.cur
	b.records++
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default: // the flusher is told already
	}
	return b, nil
}

// wait returns once b's records are durable, or the write or sync that
// would have made them so failed.
func (w *logWriter) wait(b *logBatch) error {
	<-b.done
	return b.err
}

// syncEvery is the shortest time between the starts of two syncs of the
// log while writers crowd (the last sync carried records of several): the
// records that come meanwhile share a sync, up to this much later. A
// writer alone is synced at once. A sync costs the process 50 to 150 µs
// of CPU (the kernel's journal commit) however few records it carries: at
// 2 ms a crawl of 3,000 pages a second paid 20 to 30 µs a page for them,
// at 8 ms 8 to 10 (BENCHMARKS.md). The writes still go out in time for a
// crawler: 256 writers waiting a sync each (crawl.DefaultParallel) take
// 25,000 records a second.
const syncEvery = 8 * time.Millisecond

// flusher writes and syncs the appended records, batch after batch, until
// close.
func (w *logWriter) flusher() {
	defer close(w.done)
	var last time.Time
	crowd := false
	for {
		select {
		case <-w.kick:
		case <-w.stop:
			w.flush() // what was appended before close
			return
		}
		if d := syncEvery - time.Since(last); crowd && d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-w.stop:
				t.Stop()
			}
		}
		last = time.Now()
		crowd = w.flush() > 1
	}
}

// flush writes and syncs the records appended so far and returns how many
// they were.
func (w *logWriter) flush() int {
	w.mu.Lock()
	if len(w.buf) == 0 {
		w.mu.Unlock()
		return 0
	}
	buf, b, f, err := w.buf, w.cur, w.active, w.err
	w.buf, w.cur, w.inward = w.spare[:0], &logBatch{done: make(chan struct{})}, b
	w.mu.Unlock()
	if err == nil {
		if _, err = f.f.Write(buf); err == nil {
			if w.beforeSync != nil {
				w.beforeSync()
			}
			err = f.f.Sync()
		}
		if err != nil {
			err = fmt.Errorf("boltstate: log %s: %w", f.path, err)
		}
	}
	w.mu.Lock()
	w.spare = buf[:0]
	if cap(w.spare) > 4<<20 {
		w.spare = nil // a burst's buffer is not kept
	}
	w.syncs++
	if err != nil && w.err == nil {
		w.err = err
	}
	b.err = w.err
	w.inward = nil
	w.mu.Unlock()
	close(b.done)
	return b.records
}

// switchTo makes next the active file once every record appended so far
// is durable in the current one, and the flusher is done with it. The
// caller keeps appends from running.
func (w *logWriter) switchTo(next *logFile) error {
	w.mu.Lock()
	b := w.inward // the flusher writes the current file
	if len(w.buf) > 0 {
		b = w.cur // flushed after the inward batch: waiting for it waits for both
	}
	w.mu.Unlock()
	if b != nil {
		if err := w.wait(b); err != nil {
			return err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.active = next
	return nil
}

// fail makes err the writer's sticky error (if it has none).
func (w *logWriter) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

// close stops the flusher once it has written what was appended.
func (w *logWriter) close() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

// openLogFiles opens (creating) the two log files of the bbolt file at
// dbPath and takes their locks, as the bbolt file's own (shared for a
// read-only state): a second State on one file, in this process or
// another, is refused.
func openLogFiles(dbPath string, readOnly bool, timeout time.Duration) ([2]*logFile, error) {
	var files [2]*logFile
	flag := os.O_RDWR | os.O_CREATE
	if readOnly {
		flag = os.O_RDONLY
	}
	created := false
	for i, suffix := range LogSuffixes {
		path := dbPath + suffix
		if !readOnly {
			if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
				created = true
			}
		}
		f, err := os.OpenFile(path, flag, 0o600)
		if readOnly && errors.Is(err, os.ErrNotExist) {
			continue // nothing logged
		}
		if err == nil {
			if err = lock(f, readOnly, timeout); err != nil {
				f.Close()
				err = fmt.Errorf("%w: its log %s is held by another State or process", ErrLocked, path)
			}
		}
		if err != nil {
			closeLogFiles(files)
			return files, err
		}
		files[i] = &logFile{path: path, f: f}
	}
	if created {
		if err := syncDir(filepath.Dir(dbPath)); err != nil {
			closeLogFiles(files)
			return files, fmt.Errorf("boltstate: log: %w", err)
		}
	}
	return files, nil
}

func closeLogFiles(files [2]*logFile) {
	for _, l := range files {
		if l != nil {
			l.f.Close()
		}
	}
}

// syncDir syncs a directory, so that a file created in it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
