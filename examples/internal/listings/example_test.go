package listings_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/goodbot-go/goodbot/examples/internal/listings"
)

func ExampleParse() {
	file := `listing_url,backlink,directory,schedule
https://bakery.example/partners,https://citydir.example/listing/bakery,citydir.example,weekly
https://florist.example/links,https://citydir.example/listing/florist,citydir.example,hourly
`
	ls, err := listings.Parse(strings.NewReader(file), "listings.csv")
	fmt.Println(err)
	last := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, l := range ls {
		fmt.Println(l.Line, l.URL, l.Schedule, l.Due(last, last.AddDate(0, 0, 7)))
	}
	// Output:
	// listings: listings.csv: 1 malformed row(s), skipped
	//   listings: line 3: schedule "hourly" is not daily, weekly or monthly
	// 2 https://bakery.example/partners weekly true
}
