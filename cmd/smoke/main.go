package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, &http.Client{Timeout: defaultTimeout}))
}

// run is the command: one argument, the base URL; it prints the results to out and
// returns the exit code (0 all passed, 1 a check failed, 2 a bad argument).
func run(ctx context.Context, args []string, out, errOut io.Writer, client *http.Client) int {
	if len(args) != 1 {
		fmt.Fprintln(errOut, "usage: smoke URL   (the stack's base URL, e.g. the BaseUrl output; make smoke URL=…)")
		return 2
	}
	u, err := url.Parse(args[0])
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.RawQuery != "" {
		fmt.Fprintf(errOut, "smoke: %q is not an absolute http(s) URL without a query\n", args[0])
		return 2
	}
	failed := 0
	for _, r := range Check(ctx, client, args[0]) {
		switch {
		case r.Problem == "":
			fmt.Fprintf(out, "ok    %s\n", r.Name)
		case r.Skipped:
			fmt.Fprintf(out, "skip  %s: %s\n", r.Name, r.Problem)
		default:
			failed++
			fmt.Fprintf(out, "FAIL  %s: %s\n", r.Name, r.Problem)
		}
	}
	if failed > 0 {
		fmt.Fprintf(out, "%d check(s) failed\n", failed)
		return 1
	}
	fmt.Fprintln(out, "all checks passed")
	return 0
}
