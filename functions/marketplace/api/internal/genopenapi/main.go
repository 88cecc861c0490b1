// Command genopenapi writes the product's OpenAPI document (api.BuildOpenAPI) to the file
// named by its argument: `go generate ./functions/marketplace/api` runs it.
package main

import (
	"fmt"
	"os"

	"github.com/agentpack/gateway/functions/marketplace/api"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: genopenapi FILE")
		os.Exit(2)
	}
	raw, err := api.BuildOpenAPI()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[1], raw, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
