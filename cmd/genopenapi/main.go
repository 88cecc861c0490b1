// Command genopenapi writes the product's OpenAPI document to the file named by its
// argument: the marketplace function's operations and the pins function's, in that order
// (build). `go generate ./functions/marketplace/api` runs it, in that package's folder,
// which serves the file it writes. It lives in cmd/ because it imports both functions,
// which do not import each other (test/rules/composition_test.go).
package main

import (
	"fmt"
	"os"

	"github.com/agentpack/gateway/functions/marketplace/api"
	pinsapi "github.com/agentpack/gateway/functions/pins/api"
)

// build returns the product's document: api.BuildOpenAPI over the pins function's
// operations (indented JSON). Errors: api.BuildOpenAPI's.
func build() ([]byte, error) { return api.BuildOpenAPI(pinsapi.Ops()...) }

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: genopenapi FILE")
		os.Exit(2)
	}
	raw, err := build()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[1], raw, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
