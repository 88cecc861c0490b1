package searcheval

import (
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/agentpack/gateway/shared/search"
)

//go:embed testdata/servers testdata/queries.json
var files embed.FS

// Servers returns the recorded dumps (testdata/servers), ordered by id.
func Servers() ([]Dump, error) {
	entries, err := files.ReadDir("testdata/servers")
	if err != nil {
		return nil, err
	}
	var out []Dump
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		raw, err := files.ReadFile(path.Join("testdata/servers", e.Name()))
		if err != nil {
			return nil, err
		}
		var d Dump
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b Dump) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Query is one labelled query (testdata/queries.json): its split ("dev" or "test"), its
// kind (paraphrase, two-tool, vague, non-english, near-miss), its language, its text, and
// its needs: each need is the list of tools ("server/tool") any one of which answers it
// (a two-tool task has two needs).
type Query struct {
	ID    string     `json:"id"`
	Split string     `json:"split"`
	Kind  string     `json:"kind"`
	Lang  string     `json:"lang"`
	Text  string     `json:"query"`
	Needs [][]string `json:"needs"`
}

// Queries returns the labelled queries.
func Queries() ([]Query, error) {
	raw, err := files.ReadFile("testdata/queries.json")
	if err != nil {
		return nil, err
	}
	var qs []Query
	if err := json.Unmarshal(raw, &qs); err != nil {
		return nil, fmt.Errorf("queries.json: %w", err)
	}
	return qs, nil
}

// Tool is one tool of an evaluation workspace: its id ("server/tool"), the name the
// gateway exposes ("mcp_<server>_<tool>"), its server and definition.
type Tool struct {
	ID          string
	Exposed     string
	Server      string
	ServerDesc  string
	Name        string
	Title       string
	Description string
	InputSchema json.RawMessage
}

// Distractor sets (Workspace's distractors argument).
const (
	// DistractorsGateway is the gateway's own 20,000-tool synthetic workspace
	// (cmd/bench's scale stub, cmd/local/stack's discovery test): servers "Server N" of
	// echo and tool_1 … tool_19, every one described as doing "thing number tool_N to the
	// resource identified by id".
	DistractorsGateway = "gateway"
	// DistractorsRealistic is shared/search's benchmark workspace, harder: tools named
	// verb_noun over common verbs (list, get, create, update, delete, search, sync,
	// export) and nouns (issue, repository, file, ticket, invoice, user, event, message,
	// page, record), each 20 to a server.
	DistractorsRealistic = "realistic"
)

// Workspace returns the real tools of dumps followed by distractors up to n tools (no
// distractors when n is at most the real tools' count).
func Workspace(dumps []Dump, n int, distractors string) []Tool {
	var out []Tool
	for _, d := range dumps {
		for _, t := range d.Tools {
			out = append(out, Tool{ID: d.ID + "/" + t.Name, Exposed: exposed(d.ID, t.Name), Server: d.ID, ServerDesc: d.Description,
				Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema})
		}
	}
	for i := 0; len(out) < n; i++ {
		out = append(out, distractor(i, distractors))
	}
	return out
}

// exposed is the gateway's exposed-name shape (mcp_<handle>_<tool>, lower-case handle).
func exposed(server, tool string) string {
	return "mcp_" + strings.ReplaceAll(server, "-", "") + "_" + tool
}

var gatewaySchema = json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"resource id"},` +
	`"limit":{"type":"integer","description":"at most this many"},"query":{"type":"string","description":"a filter"}},"required":["id"]}`)

// distractor is the i-th synthetic tool of a distractor set.
func distractor(i int, set string) Tool {
	srv := fmt.Sprintf("Server %d", i/20)
	handle := fmt.Sprintf("server%d", i/20)
	if set == DistractorsRealistic {
		verbs := []string{"list", "get", "create", "update", "delete", "search", "sync", "export"}
		nouns := []string{"issue", "repository", "file", "ticket", "invoice", "user", "event", "message", "page", "record"}
		v, o := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
		name := fmt.Sprintf("%s_%s_%d", v, o, i%20)
		return Tool{ID: handle + "/" + name, Exposed: exposed(handle, name), Server: srv, Name: name, Title: v + " " + o,
			Description: fmt.Sprintf("%s the %s identified by id on server %d, returning the updated %s as JSON.", v, o, i/20, o),
			InputSchema: gatewaySchema}
	}
	if i%20 == 0 {
		return Tool{ID: handle + "/echo", Exposed: exposed(handle, "echo"), Server: srv, Name: "echo", Description: "Echoes back the input message.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`)}
	}
	name := fmt.Sprintf("tool_%d", i%20)
	return Tool{ID: handle + "/" + name, Exposed: exposed(handle, name), Server: srv, Name: name, Title: "Tool " + name,
		Description: "Does thing number " + name + " to the resource identified by id, returning the updated resource as JSON.",
		InputSchema: gatewaySchema}
}

// Ranker ranks a workspace's tools for a query: the positions of the best, best first.
type Ranker interface {
	Rank(query string, limit int) []int
}

// After is the current ranker (shared/search) over tools, indexed as the gateway does
// (search.ToolDoc), with p.
func After(tools []Tool, p search.Params) Ranker { return IndexRanker(NewIndex(tools, p)) }

// NewIndex is the shared/search index of tools, as the gateway builds it (search.ToolDoc),
// with p.
func NewIndex(tools []Tool, p search.Params) *search.Index {
	docs := make([]search.Doc, len(tools))
	for i, t := range tools {
		d, ok := search.ToolDoc(t.Server, t.ServerDesc, t.Name, t.Title, t.Description, t.InputSchema)
		if !ok {
			d = search.Doc{Name: t.Name}
		}
		docs[i] = d
	}
	return search.NewWithParams(docs, p)
}

// IndexRanker ranks with ix (Hit.Doc is the tool's position).
func IndexRanker(ix *search.Index) Ranker { return afterRanker{ix} }

type afterRanker struct{ ix *search.Index }

func (r afterRanker) Rank(q string, limit int) []int {
	hits, _ := r.ix.Search(q, limit, nil)
	out := make([]int, len(hits))
	for i, h := range hits {
		out[i] = h.Doc
	}
	return out
}

// Before is the ranker as it was before issue 32 (baseline.go), over tools indexed as
// the gateway then did: exposed name, title, description, parameter names.
func Before(tools []Tool) Ranker {
	docs := make([]legacyDoc, len(tools))
	for i, t := range tools {
		d, _ := search.ToolDoc("", "", t.Name, t.Title, t.Description, t.InputSchema)
		docs[i] = legacyDoc{Name: t.Exposed, Title: t.Title, Description: t.Description, Params: d.Params}
	}
	return beforeRanker{newLegacy(docs)}
}

type beforeRanker struct{ ix *legacyIndex }

func (r beforeRanker) Rank(q string, limit int) []int {
	hits, _ := r.ix.Search(q, limit, nil)
	out := make([]int, len(hits))
	for i, h := range hits {
		out[i] = h.Doc
	}
	return out
}

// Result holds the measures of one ranker over a list of queries.
//
// Recall@k is the share of a query's needs met by its top k (a need is met when any of
// its tools is there), averaged over queries; nDCG@10 gains 1 at the first tool of each
// need (log2 discount) over the ideal of every need met at the top; MRR is the
// reciprocal rank of the first tool that meets a need (0 past rank 10). P50 and P95 are
// the per-query search latencies (each the fastest of three runs), in process.
type Result struct {
	Queries    int
	Recall1    float64
	Recall5    float64
	NDCG10     float64
	MRR        float64
	P50, P95   time.Duration
	PerQuery   []QueryResult
	Unresolved []string // labelled tool ids missing from the workspace
}

// QueryResult is one query's outcome: the ids ranked, and its Recall@5.
type QueryResult struct {
	Query   Query
	Top     []string
	Recall5 float64
}

// Evaluate runs the queries through r over tools.
func Evaluate(r Ranker, tools []Tool, qs []Query) Result { return evaluate(r, tools, qs, 3) }

// Quality is Evaluate without the latencies (each query run once; P50 and P95 are not
// measured): for tuning, which runs the queries many times.
func Quality(r Ranker, tools []Tool, qs []Query) Result { return evaluate(r, tools, qs, 1) }

func evaluate(r Ranker, tools []Tool, qs []Query, runs int) Result {
	pos := make(map[string]int, len(tools))
	for i, t := range tools {
		pos[t.ID] = i
	}
	var res Result
	var lat []time.Duration
	for _, q := range qs {
		for _, need := range q.Needs {
			for _, id := range need {
				if _, ok := pos[id]; !ok {
					res.Unresolved = append(res.Unresolved, q.ID+":"+id)
				}
			}
		}
		// The latency of a query is the fastest of three runs: on a shared machine the
		// slower runs measure the scheduler, not the search.
		var ranked []int
		fastest := time.Duration(math.MaxInt64)
		for range runs {
			start := time.Now()
			ranked = r.Rank(q.Text, 10)
			fastest = min(fastest, time.Since(start))
		}
		lat = append(lat, fastest)
		top := make([]string, len(ranked))
		for i, d := range ranked {
			top[i] = tools[d].ID
		}
		r1, r5, ndcg, rr := score(top, q.Needs)
		res.Recall1 += r1
		res.Recall5 += r5
		res.NDCG10 += ndcg
		res.MRR += rr
		res.PerQuery = append(res.PerQuery, QueryResult{Query: q, Top: top, Recall5: r5})
	}
	res.Queries = len(qs)
	if n := float64(len(qs)); n > 0 {
		res.Recall1 /= n
		res.Recall5 /= n
		res.NDCG10 /= n
		res.MRR /= n
	}
	slices.Sort(lat)
	if len(lat) > 0 && runs > 1 {
		res.P50 = lat[len(lat)*50/100]
		res.P95 = lat[min(len(lat)-1, len(lat)*95/100)]
	}
	return res
}

// score measures one ranking against a query's needs (see Result).
func score(top []string, needs [][]string) (r1, r5, ndcg, rr float64) {
	if len(needs) == 0 {
		return 0, 0, 0, 0
	}
	met := make([]bool, len(needs))
	var dcg float64
	gains := 0
	for i, id := range top {
		if i >= 10 {
			break
		}
		for n, need := range needs {
			if met[n] || !slices.Contains(need, id) {
				continue
			}
			met[n] = true
			gains++
			dcg += 1 / math.Log2(float64(i)+2)
			if rr == 0 {
				rr = 1 / float64(i+1)
			}
			if i < 1 {
				r1++
			}
			if i < 5 {
				r5++
			}
			break
		}
	}
	var ideal float64
	for i := range needs {
		ideal += 1 / math.Log2(float64(i)+2)
	}
	nn := float64(len(needs))
	return r1 / nn, r5 / nn, dcg / ideal, rr
}

// Split returns the queries of one split ("dev" or "test"; "" for all).
func Split(qs []Query, split string) []Query {
	if split == "" {
		return qs
	}
	var out []Query
	for _, q := range qs {
		if q.Split == split {
			out = append(out, q)
		}
	}
	return out
}
