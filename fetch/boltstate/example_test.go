package boltstate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/goodbot-go/goodbot/fetch"
	"github.com/goodbot-go/goodbot/fetch/boltstate"
)

func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "boltstate")
	defer os.RemoveAll(dir)

	st, err := boltstate.Open(filepath.Join(dir, "bot.db"), nil)
	if err != nil {
		panic(err)
	}
	defer st.Close()
	bot := fetch.Bot{UserAgent: "ExampleBot/1.0"}
	st.Apply(&bot) // robots.txt copies, validators and the fetched set now live in bot.db

	_ = bot.Validators.Save(context.Background(), "https://example.org/", fetch.Validator{ETag: `"v1"`})
	v, ok, _ := st.Validators.Load(context.Background(), "https://example.org/")
	fmt.Println(v.ETag, ok)
	// Output:
	// "v1" true
}

// A write of several changes is one record of the state's log: durable
// once Write returns, all of them or none. Reads see it at once; the bbolt
// file gets it at the next checkpoint (here, Close).
func ExampleState_Write() {
	dir, _ := os.MkdirTemp("", "boltstate")
	defer os.RemoveAll(dir)
	st, err := boltstate.Open(filepath.Join(dir, "bot.db"), nil)
	if err != nil {
		panic(err)
	}
	defer st.Close()
	ctx := context.Background()

	err = st.Write(ctx, func(tx *boltstate.Tx) error {
		seq, err := tx.NextSequence("outcomes")
		if err != nil {
			return err
		}
		if err := tx.Put("outcomes", "https://example.org/", []byte(fmt.Sprint("ok #", seq))); err != nil {
			return err
		}
		return tx.Put("outcomes", "https://example.org/about", []byte("not_modified"))
	})
	if err != nil {
		panic(err)
	}
	st.ForEach(ctx, "outcomes", func(k, v []byte) error {
		fmt.Printf("%s %s\n", k, v)
		return nil
	})
	// Output:
	// https://example.org/ ok #1
	// https://example.org/about not_modified
}

// A cache kept in the state file, which a crash may lose: written without
// the log (no sync to wait for), read at once, in the file after the next
// checkpoint.
func ExampleState_WriteUnlogged() {
	dir, _ := os.MkdirTemp("", "boltstate")
	defer os.RemoveAll(dir)
	st, err := boltstate.Open(filepath.Join(dir, "bot.db"), nil)
	if err != nil {
		panic(err)
	}
	defer st.Close()
	ctx := context.Background()

	err = st.WriteUnlogged(ctx, func(tx *boltstate.Tx) error {
		return tx.Put("link-cache", "https://example.org/", []byte("3 links"))
	})
	if err != nil {
		panic(err)
	}
	v, _ := st.Get(ctx, "link-cache", "https://example.org/")
	fmt.Printf("%s\n", v)
	// Output:
	// 3 links
}
