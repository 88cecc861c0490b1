package urlguard

import "net/url"

func parseForTest(raw string) (*url.URL, error) { return url.Parse(raw) }
