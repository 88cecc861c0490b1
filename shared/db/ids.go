package db

import (
	"github.com/agentpack/gateway/shared/apperr"
	"github.com/google/uuid"
)

// IsUUID reports whether s is a canonical UUID (what every primary key is).
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}

func notFound() error { return apperr.New(apperr.NotFound, "not found") }
