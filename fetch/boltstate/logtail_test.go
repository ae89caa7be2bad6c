package boltstate_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/goodbot-go/goodbot/fetch/boltstate"
)

// putRecord is a whole log record, as the log format's doc describes it,
// of one write putting value at key in bucket: the payload's length
// (u32), its CRC-32C, the payload's CRC-32C (little-endian), then the
// payload: kind 1 (put), then bucket, key and value, each a uvarint
// length and its bytes.
func putRecord(bucket, key, value string) []byte {
	var p []byte
	p = append(p, 1)
	for _, s := range []string{bucket, key, value} {
		p = binary.AppendUvarint(p, uint64(len(s)))
		p = append(p, s...)
	}
	table := crc32.MakeTable(crc32.Castagnoli)
	rec := binary.LittleEndian.AppendUint32(nil, uint32(len(p)))
	rec = binary.LittleEndian.AppendUint32(rec, crc32.Checksum(rec, table))
	rec = binary.LittleEndian.AppendUint32(rec, crc32.Checksum(p, table))
	return append(rec, p...)
}

// A log that ends in a record cut by a crash drops it, and the note says
// how many bytes of it were dropped (its header and what of its payload
// was written); nothing is taken for damage. A log that ends with a whole
// record drops nothing and says nothing of a cut.
func TestLog_TornTailSaysItsBytes(t *testing.T) {
	k := newKilledLog(t, 3)
	second, third := k.ends[0], k.ends[1] // where the second and third records start
	for _, c := range []struct {
		cut      int // bytes of the log kept
		replayed int
		torn     int // 0: no note of a cut
	}{
		{k.ends[2], 3, 0},
		{third, 2, 0},
		{third + 1, 2, 1},
		{third + 11, 2, 11},
		{third + 12, 2, 12},
		{third + 13, 2, 13},
		{k.ends[2] - 1, 2, k.ends[2] - 1 - third},
		{second + 20, 1, 20},
	} {
		_, prefix, holes, logs := k.replay(t, k.log[:c.cut])
		if prefix != c.replayed || holes {
			t.Errorf("log cut at byte %d: %d records replayed (holes %v), want %d", c.cut, prefix, holes, c.replayed)
		}
		if c.torn == 0 {
			if strings.Contains(logs, "bytes=") {
				t.Errorf("log cut at byte %d, after a whole record: a cut noted:\n%s", c.cut, logs)
			}
		} else if want := fmt.Sprintf("bytes=%d\n", c.torn); !strings.Contains(logs, want) {
			t.Errorf("log cut at byte %d: the note does not say %q:\n%s", c.cut, want, logs)
		}
		if strings.Contains(logs, "damaged") {
			t.Errorf("log cut at byte %d taken for damage:\n%s", c.cut, logs)
		}
	}
}

// A crowd's pause is measured from the start of the last sync: a write
// that comes a while after a sync that carried several writers' records
// waits only what is left of the 8 ms since that sync started, nothing
// once they have passed (not another 8 ms, nor as long as the log idled).
func TestLog_WriteAfterAnIdleCrowdWaitsWhatIsLeft(t *testing.T) {
	for _, c := range []struct {
		idle, wait time.Duration
	}{
		{3 * time.Millisecond, 5 * time.Millisecond},
		{8 * time.Millisecond, 0},
		{time.Second, 0},
	} {
		t.Run(fmt.Sprint(c.idle), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st, put, syncs := crowdSynced(t, false)
				defer st.Close()
				time.Sleep(c.idle) // the bubble's clock: no real wait
				start := time.Now()
				put("late")
				if d := time.Since(start); d != c.wait {
					t.Errorf("a write %v after the crowd's sync waited %v, want %v", c.idle, d, c.wait)
				}
				if n := len(syncs()); n != 3 {
					t.Errorf("%d syncs, want 3 (one writer's record, two writers', the late one)", n)
				}
			})
		})
	}
}

// A checkpoint that started while a batch was being synced switches the
// log to its other file all the same: a write acknowledged while the
// checkpoint applies what it froze is in the other file, and survives the
// emptying of the file the checkpoint applied, and a kill after it.
func TestLog_WriteDuringACheckpointAfterABatchInFlightSurvives(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.db")
	synctest.Test(t, func(t *testing.T) {
		st, err := boltstate.Open(path, &boltstate.Options{CheckpointBytes: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		wrote, release := writeHeldAtItsSync(st) // the batch is written, not yet synced
		during := make(chan error, 1)
		boltstate.SetCheckpointHook(st, func(stage string) {
			if stage == "applied" { // before the applied file is emptied
				during <- st.Write(ctx, func(tx *boltstate.Tx) error { return tx.Put("b", "during", []byte("v")) })
			}
		})
		checkpointed := make(chan error, 1)
		go func() { checkpointed <- st.Checkpoint(ctx) }()
		synctest.Wait() // the checkpoint waits for the batch in flight
		close(release)
		if err := <-wrote; err != nil {
			t.Fatal(err)
		}
		if err := <-checkpointed; err != nil {
			t.Fatal(err)
		}
		if err := <-during; err != nil {
			t.Fatal(err)
		}
		boltstate.Abandon(st) // killed: the write made during the checkpoint is only in the log
	})
	st := openState(t, path)
	defer st.Close()
	for _, k := range [][2]string{{"l", "k"}, {"b", "during"}} {
		if v, err := st.Get(context.Background(), k[0], k[1]); err != nil || string(v) != "v" {
			t.Errorf("%s/%s after a kill = %q, %v; want %q (an acknowledged write)", k[0], k[1], v, err, "v")
		}
	}
}
