// Package searcheval is the tool search's evaluation set and its measures
// (docs/SEARCH.md): the recorded tools/list of real MCP servers from npm
// (testdata/servers, recorded by cmd/toolsdump), the labelled queries
// (testdata/queries.json, split dev/test), a synthetic workspace of distractor tools,
// and Recall@k, nDCG@10 and MRR. The regression test of shared/search and
// make bench-search (cmd/bench -only search) read it; nothing in a deployed function
// imports it.
package searcheval
