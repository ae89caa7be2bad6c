package fetch

// ProductToken returns the robots.txt product token the profile's bot
// matches groups against: Token, or the product name at the start of
// UserAgent. It fails as New does when neither gives one.
func (b *Bot) ProductToken() (string, error) {
	a, err := b.agent()
	return a.Token, err
}
