package toolsearch

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testutil"
)

func TestWords(t *testing.T) {
	for text, want := range map[string][]string{
		"get_weather":         {"get", "weather"},
		"fs.readFile":         {"fs", "read", "file"},
		"getHTTPStatus":       {"get", "http", "status"},
		"list-open-issues":    {"list", "open", "issue"},
		"Queries S3 buckets":  {"query", "s3", "bucket"},
		"p07_echo2":           {"p07", "echo2"},
		"  ":                  nil,
		"Ünïcode_Wörter":      {"ünïcode", "wörter"},
		"analysis of classes": {"analysis", "of", "classe"},
	} {
		got := Words(text)
		if !slices.Equal(got, want) {
			t.Errorf("Words(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestSearchRanksByFieldAndFilters(t *testing.T) {
	docs := []Document{
		{Name: "send_email", Description: "Sends an email message to a recipient."},
		{Name: "read_file", Title: "Read a file", Description: "Reads a file from the workspace.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"Where the file is."}}}`)},
		{Name: "list_files", Description: "Lists the files of a directory."},
		{Name: "weather", Description: "Forecast for a city.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"opts":{"type":"object","properties":{"units":{"type":"string"}}}}}`)},
	}
	ix := New(docs)
	hits := ix.Search("read file", 10, nil)
	if len(hits) != 2 || hits[0].Doc != 1 || hits[1].Doc != 2 {
		t.Fatalf("read file: %+v, want read_file then list_files", hits)
	}
	if hits := ix.Search("units", 10, nil); len(hits) != 1 || hits[0].Doc != 3 {
		t.Errorf("a nested property's name: %+v", hits)
	}
	if hits := ix.Search("where", 10, nil); len(hits) != 1 || hits[0].Doc != 1 {
		t.Errorf("a property's description: %+v", hits)
	}
	if hits := ix.Search("read file", 10, func(d int) bool { return d != 1 }); len(hits) != 1 || hits[0].Doc != 2 {
		t.Errorf("filtered: %+v, want list_files only", hits)
	}
	if hits := ix.Search("file", 1, nil); len(hits) != 1 {
		t.Errorf("limit 1: %+v", hits)
	}
	if hits := ix.Search("nothing-matches", 10, nil); len(hits) != 0 {
		t.Errorf("no match: %+v", hits)
	}
	if hits := ix.Search("", 10, nil); hits != nil {
		t.Errorf("empty query: %+v", hits)
	}
}

// The filter is asked only about documents that would make the cut.
func TestSearchAsksAllowLazily(t *testing.T) {
	docs := make([]Document, 1000)
	for i := range docs {
		docs[i] = Document{Name: fmt.Sprintf("tool_%d", i), Description: "A tool."}
	}
	docs[500].Description = "A special tool."
	asked := 0
	hits := New(docs).Search("special tool", 1, func(int) bool { asked++; return true })
	if len(hits) != 1 || hits[0].Doc != 500 {
		t.Fatalf("hits %+v", hits)
	}
	if asked > 2 {
		t.Errorf("allow asked %d times for a limit of 1", asked)
	}
}

// synthetic returns n tool documents shaped like real ones: a verb and a
// noun in the name, a sentence of description, two or three properties.
func synthetic(n int) []Document {
	verbs := []string{"get", "list", "create", "update", "delete", "search", "send", "read", "write", "sync", "run", "check"}
	nouns := []string{"issue", "file", "email", "calendar_event", "repository", "ticket", "invoice", "user", "channel", "document", "weather", "build", "deployment", "metric", "alert", "bucket"}
	docs := make([]Document, n)
	for i := range docs {
		v, o := verbs[i%len(verbs)], nouns[(i/len(verbs))%len(nouns)]
		docs[i] = Document{
			Name:        fmt.Sprintf("svc%03d_%s_%s", i/100, v, o),
			Description: fmt.Sprintf("%s a %s in service %d. Use it when the user asks to %s one; it returns the %s as JSON.", v, o, i/100, v, o),
			InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"id":{"type":"string","description":"The %s's id."},"limit":{"type":"integer","description":"At most this many."},"filter_%d":{"type":"string"}},"required":["id"]}`, o, i%7)),
		}
	}
	return docs
}

// BenchmarkSearch searches 10,000 tools for a three-word query, limit 10.
// One op is one search. Goal (issue 31): p50 < 2 ms.
func BenchmarkSearch(b *testing.B) {
	docs := synthetic(10_000)
	began := time.Now()
	ix := New(docs)
	build := time.Since(began)
	queries := []string{"create calendar event", "send email to user", "list open issues in repository", "weather", "delete bucket"}
	var took []time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		t := time.Now()
		hits := ix.Search(queries[i%len(queries)], 10, nil)
		took = append(took, time.Since(t))
		if len(hits) == 0 {
			b.Fatal("no hits")
		}
	}
	b.StopTimer()
	testutil.ReportPercentiles(b, took, time.Microsecond, "search-µs")
	b.ReportMetric(float64(build.Microseconds())/1000, "build-ms")
}
