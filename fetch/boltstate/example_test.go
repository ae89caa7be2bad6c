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
