package searcheval

import "encoding/json"

// Source is one server of the evaluation set as testdata/sources.json lists it: an id
// (the dump's file name and the connection name in the workspace), the npm package and
// its pinned version, the package's bin to run when it has several, and the placeholder
// arguments and environment it needs to start and list its tools without credentials
// ("{tmp}" stands for a fresh temporary directory). cmd/toolsdump reads it.
type Source struct {
	ID      string            `json:"id"`
	Package string            `json:"package"`
	Version string            `json:"version"`
	Bin     string            `json:"bin,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// Dump is one server's recorded tools/list (testdata/servers/<id>.json): the package,
// the version installed, the package's own description (standing in for the catalog
// entry's description), the server's initialize answer and its tools as listed.
type Dump struct {
	ID            string     `json:"id"`
	Package       string     `json:"package"`
	Version       string     `json:"version"`
	Description   string     `json:"description"`
	ServerName    string     `json:"serverName,omitempty"`
	ServerVersion string     `json:"serverVersion,omitempty"`
	Instructions  string     `json:"instructions,omitempty"`
	Tools         []DumpTool `json:"tools"`
}

// DumpTool is one tool as the server listed it.
type DumpTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}
