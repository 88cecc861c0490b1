package db

import (
	"github.com/pressly/goose/v3/lock"
)

// mustLocker returns goose's Postgres session locker (a pg_advisory_lock around the
// migration run). Its defaults cannot fail; a failure is a programming error.
func mustLocker() lock.SessionLocker {
	l, err := lock.NewPostgresSessionLocker()
	if err != nil {
		panic(err)
	}
	return l
}
