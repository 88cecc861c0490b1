// Package reporoot finds the repository's root directory from inside it. It imports only
// the standard library, so the tests' peers (shared/testpeer), the emulator harness
// (infra/rie) and the commands can all use it.
package reporoot

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
)

// Find returns the nearest directory at or above dir holding a go.mod whose module is
// github.com/agentpack/gateway (dir is made absolute first). It returns an error when
// there is none, up to the file system's root.
func Find(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module github.com/agentpack/gateway\n")) {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", errors.New("reporoot: repository root not found")
		}
		d = parent
	}
}
