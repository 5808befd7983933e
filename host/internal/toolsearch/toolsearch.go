// Package toolsearch ranks tool definitions against a query with BM25
// (Robertson and Zaragoza's Okapi BM25, with per-field weights as in
// BM25F): an in-memory inverted index, built once from the tools of one
// catalog view and never changed, so searches read it without locks.
//
// A tool is indexed by its name (split into words at '_', '-', '.' and
// camelCase), its title, its description, and the names and descriptions
// of its input schema's properties. Words are lower-cased and lose a
// plural "s" ("files" finds "file"); nothing else is stemmed, and there
// are no stop words (BM25's idf makes a word every tool has count for
// almost nothing).
package toolsearch

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// BM25's parameters: k1 bounds what repeating a word adds, b how much a
// long document is penalised. The textbook values.
const (
	k1 = 1.2
	b  = 0.75
)

// Field weights: a word in a tool's name says more about it than one in
// its description.
const (
	weightName        = 3
	weightTitle       = 2
	weightDescription = 1
	weightProperty    = 1.5 // a property's name
	weightPropertyDoc = 0.5 // a property's description
)

// maxSchemaDepth bounds how deep into nested object properties the index
// reads a schema (a schema is a plugin's, and may be deep).
const maxSchemaDepth = 4

// Document is one tool to index.
type Document struct {
	Name, Title, Description string
	// InputSchema is the tool's input schema as JSON: the names and
	// descriptions of its properties are indexed.
	InputSchema json.RawMessage
}

// Index is an inverted index of documents, ranked by BM25.
type Index struct {
	postings map[string][]posting // word -> documents holding it, in document order
	lengths  []float32            // each document's weighted length
	avgLen   float64
}

type posting struct {
	doc int32
	tf  float32 // weighted term frequency
}

// Hit is a document that matched a query: its position in the documents
// New was given, and its score.
type Hit struct {
	Doc   int
	Score float64
}

// New indexes docs; a Hit's Doc is an index into docs.
func New(docs []Document) *Index {
	ix := &Index{postings: map[string][]posting{}, lengths: make([]float32, len(docs))}
	total := 0.0
	tf := map[string]float32{}
	for i, d := range docs {
		clear(tf)
		length := float32(0)
		add := func(text string, weight float32) {
			for _, w := range Words(text) {
				tf[w] += weight
				length += weight
			}
		}
		add(d.Name, weightName)
		add(d.Title, weightTitle)
		add(d.Description, weightDescription)
		if len(d.InputSchema) > 0 {
			var schema schemaNode
			if json.Unmarshal(d.InputSchema, &schema) == nil {
				schemaWords(&schema, 0, add)
			}
		}
		for w, f := range tf {
			ix.postings[w] = append(ix.postings[w], posting{doc: int32(i), tf: f})
		}
		ix.lengths[i] = length
		total += float64(length)
	}
	if len(docs) > 0 {
		ix.avgLen = total / float64(len(docs))
	}
	return ix
}

// schemaNode is what the index reads of a schema: decoding into it skips
// everything else, which decoding into any would build.
type schemaNode struct {
	Title       string                `json:"title"`
	Description string                `json:"description"`
	Properties  map[string]schemaNode `json:"properties"`
	Items       *schemaNode           `json:"items"`
}

// schemaWords adds the names, titles and descriptions of the properties
// of schema (and of their object properties and items, to
// maxSchemaDepth).
func schemaWords(schema *schemaNode, depth int, add func(string, float32)) {
	if schema == nil || depth >= maxSchemaDepth {
		return
	}
	for name, p := range schema.Properties {
		add(name, weightProperty)
		add(p.Description, weightPropertyDoc)
		add(p.Title, weightPropertyDoc)
		schemaWords(&p, depth+1, add)
		schemaWords(p.Items, depth+1, add)
	}
}

// Len is the number of documents indexed.
func (ix *Index) Len() int { return len(ix.lengths) }

// Search returns up to limit documents that hold a word of query and that
// allow accepts (nil: all), best first; documents that score alike come in
// the order New was given them. allow is called only for documents that
// would make the cut, so a costly check (a token's scopes) runs a few
// times, not once per match.
func (ix *Index) Search(query string, limit int, allow func(doc int) bool) []Hit {
	words := Words(query)
	if limit <= 0 || len(words) == 0 || len(ix.lengths) == 0 {
		return nil
	}
	slices.Sort(words)
	words = slices.Compact(words)
	sc := scratchPool.Get().(*scratch)
	defer sc.release()
	if len(sc.scores) < len(ix.lengths) {
		sc.scores = make([]float32, len(ix.lengths))
	}
	scores := sc.scores
	n := float64(len(ix.lengths))
	for _, w := range words {
		ps := ix.postings[w]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			norm := 1 - b + b*float64(ix.lengths[p.doc])/ix.avgLen
			if scores[p.doc] == 0 {
				sc.touched = append(sc.touched, p.doc)
			}
			scores[p.doc] += float32(idf * tf * (k1 + 1) / (tf + k1*norm))
		}
	}
	touched := sc.touched
	if len(touched) > len(ix.lengths)/16 {
		// Many matches: a pass over every score is cheaper than sorting
		// them, and gives them in document order (for ties) too.
		touched = touched[:0]
		for d, s := range scores[:len(ix.lengths)] {
			if s != 0 {
				touched = append(touched, int32(d))
			}
		}
		sc.touched = touched
	} else {
		slices.Sort(touched)
	}
	// The best limit, kept in a min-heap (worst on top) by (score, -doc).
	top := make([]Hit, 0, min(limit, len(touched)))
	worse := func(a, b Hit) bool { return a.Score < b.Score || (a.Score == b.Score && a.Doc > b.Doc) }
	for _, d := range touched {
		h := Hit{Doc: int(d), Score: float64(scores[d])}
		if len(top) == limit && !worse(top[0], h) {
			continue
		}
		if allow != nil && !allow(h.Doc) {
			continue
		}
		if len(top) < limit {
			top = append(top, h)
			up(top, len(top)-1, worse)
		} else {
			top[0] = h
			down(top, 0, worse)
		}
	}
	slices.SortFunc(top, func(a, b Hit) int {
		switch {
		case worse(b, a):
			return -1
		case worse(a, b):
			return 1
		}
		return 0
	})
	return top
}

// scratch is what one search needs as it scores: a score for every
// document (zero between searches) and the documents it touched.
type scratch struct {
	scores  []float32
	touched []int32
}

// release zeroes the scores it touched and puts sc back in the pool.
func (sc *scratch) release() {
	for _, d := range sc.touched {
		sc.scores[d] = 0
	}
	sc.touched = sc.touched[:0]
	scratchPool.Put(sc)
}

var scratchPool = sync.Pool{New: func() any { return &scratch{} }}

func up(h []Hit, i int, less func(a, b Hit) bool) {
	for i > 0 {
		parent := (i - 1) / 2
		if !less(h[i], h[parent]) {
			return
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func down(h []Hit, i int, less func(a, b Hit) bool) {
	for {
		l, r, smallest := 2*i+1, 2*i+2, i
		if l < len(h) && less(h[l], h[smallest]) {
			smallest = l
		}
		if r < len(h) && less(h[r], h[smallest]) {
			smallest = r
		}
		if smallest == i {
			return
		}
		h[i], h[smallest] = h[smallest], h[i]
		i = smallest
	}
}

// Words splits text into the words the index holds: runs of letters and
// digits, split again at camelCase ("getHTTPStatus": get, http, status),
// lower-cased, a plural "s" dropped.
func Words(text string) []string {
	var words []string
	start := -1
	var prev rune
	flush := func(end int) {
		if start >= 0 && end > start {
			words = append(words, normalize(text[start:end]))
		}
		start = -1
	}
	for i, r := range text {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			prev = 0
			continue
		}
		if start >= 0 && unicode.IsUpper(r) {
			// fooBar: a word begins at B. HTTPStatus: at S (an upper
			// followed by a lower, after an upper).
			_, size := utf8.DecodeRuneInString(text[i:])
			next, _ := utf8.DecodeRuneInString(text[i+size:])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && unicode.IsLower(next)) {
				flush(i)
			}
		}
		if start < 0 {
			start = i
		}
		prev = r
	}
	flush(len(text))
	return words
}

// normalize lower-cases a word and drops a plural ending: "queries" ->
// "query", "files" -> "file" ("status", "class", "analysis" keep theirs).
func normalize(w string) string {
	w = strings.ToLower(w)
	n := len(w)
	switch {
	case n > 4 && w[n-3:] == "ies":
		return w[:n-3] + "y"
	case n > 3 && w[n-1] == 's' && w[n-2] != 's' && w[n-2] != 'u' && w[n-2] != 'i':
		return w[:n-1]
	}
	return w
}
