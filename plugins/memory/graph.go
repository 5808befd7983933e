package main

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Entity is a node of the knowledge graph.
type Entity struct {
	Name         string   `json:"name"`
	EntityType   string   `json:"entityType"`
	Observations []string `json:"observations"`
}

// Relation is a directed edge of the knowledge graph.
type Relation struct {
	From         string `json:"from"`
	To           string `json:"to"`
	RelationType string `json:"relationType"`
}

// Graph is the whole knowledge graph, in file order.
type Graph struct {
	Entities  []Entity
	Relations []Relation
}

// ObservationAddition is one item of add_observations' input.
type ObservationAddition struct {
	EntityName string   `json:"entityName"`
	Contents   []string `json:"contents"`
}

// ObservationResult is one item of add_observations' result.
type ObservationResult struct {
	EntityName        string
	AddedObservations []string
}

// ObservationDeletion is one item of delete_observations' input.
type ObservationDeletion struct {
	EntityName   string   `json:"entityName"`
	Observations []string `json:"observations"`
}

// The operations below mirror KnowledgeGraphManager of
// @modelcontextprotocol/server-memory step for step, quirks included, so
// that the same calls leave the same file: a batch is checked against the
// graph as it was before the call, not against itself (two equal new
// entities in one call are both added), lookups take the first match, and
// a failed call changes nothing.

// createEntities adds the entities whose name no entity of g has yet and
// returns them.
func createEntities(g *Graph, entities []Entity) []Entity {
	added := []Entity{}
	for _, e := range entities {
		if !slices.ContainsFunc(g.Entities, func(x Entity) bool { return x.Name == e.Name }) {
			added = append(added, e)
		}
	}
	g.Entities = append(g.Entities, added...)
	return added
}

// createRelations adds the relations g does not hold yet and returns them.
func createRelations(g *Graph, relations []Relation) []Relation {
	added := []Relation{}
	for _, r := range relations {
		if !slices.Contains(g.Relations, r) {
			added = append(added, r)
		}
	}
	g.Relations = append(g.Relations, added...)
	return added
}

// addObservations appends to each named entity the contents it does not
// hold yet. An unknown entity fails the whole call.
func addObservations(g *Graph, additions []ObservationAddition) ([]ObservationResult, error) {
	results := []ObservationResult{}
	for _, a := range additions {
		i := slices.IndexFunc(g.Entities, func(x Entity) bool { return x.Name == a.EntityName })
		if i < 0 {
			return nil, fmt.Errorf("Entity with name %s not found", a.EntityName)
		}
		e := &g.Entities[i]
		added := []string{}
		for _, c := range a.Contents {
			if !slices.Contains(e.Observations, c) {
				added = append(added, c)
			}
		}
		e.Observations = append(e.Observations, added...)
		results = append(results, ObservationResult{EntityName: a.EntityName, AddedObservations: added})
	}
	return results, nil
}

// deleteEntities removes the named entities and every relation from or to
// one of them.
func deleteEntities(g *Graph, names []string) {
	g.Entities = slices.DeleteFunc(g.Entities, func(e Entity) bool { return slices.Contains(names, e.Name) })
	g.Relations = slices.DeleteFunc(g.Relations, func(r Relation) bool {
		return slices.Contains(names, r.From) || slices.Contains(names, r.To)
	})
}

// deleteObservations removes the given observations from the first entity
// of each name; unknown entities are ignored.
func deleteObservations(g *Graph, deletions []ObservationDeletion) {
	for _, d := range deletions {
		i := slices.IndexFunc(g.Entities, func(x Entity) bool { return x.Name == d.EntityName })
		if i < 0 {
			continue
		}
		e := &g.Entities[i]
		e.Observations = slices.DeleteFunc(e.Observations, func(o string) bool { return slices.Contains(d.Observations, o) })
	}
}

// deleteRelations removes every relation equal to one of relations.
func deleteRelations(g *Graph, relations []Relation) {
	g.Relations = slices.DeleteFunc(g.Relations, func(r Relation) bool { return slices.Contains(relations, r) })
}

// searchNodes returns the entities whose name, type or an observation
// contains query, ignoring case, and every relation with at least one end
// among them.
func searchNodes(g *Graph, query string) Graph {
	q := jsLower(query)
	matches := func(e Entity) bool {
		if strings.Contains(jsLower(e.Name), q) || strings.Contains(jsLower(e.EntityType), q) {
			return true
		}
		return slices.ContainsFunc(e.Observations, func(o string) bool { return strings.Contains(jsLower(o), q) })
	}
	return subgraph(g, matches)
}

// openNodes returns the named entities and every relation with at least
// one end among them.
func openNodes(g *Graph, names []string) Graph {
	return subgraph(g, func(e Entity) bool { return slices.Contains(names, e.Name) })
}

// subgraph returns the entities keep selects and the relations touching
// one of them.
func subgraph(g *Graph, keep func(Entity) bool) Graph {
	out := Graph{Entities: []Entity{}, Relations: []Relation{}}
	names := map[string]bool{}
	for _, e := range g.Entities {
		if keep(e) {
			out.Entities = append(out.Entities, e)
			names[e.Name] = true
		}
	}
	for _, r := range g.Relations {
		if names[r.From] || names[r.To] {
			out.Relations = append(out.Relations, r)
		}
	}
	return out
}

// jsLower is JavaScript's String.prototype.toLowerCase: strings.ToLower
// plus the two special cases of Unicode's SpecialCasing.txt that apply
// without a language: U+0130 (İ) becomes "i̇" (two code points), and a
// capital sigma that ends a word becomes ς (Final_Sigma; "cased" and
// "case-ignorable" are approximated by Unicode categories).
func jsLower(s string) string {
	if !strings.ContainsRune(s, 'İ') && !strings.ContainsRune(s, 'Σ') {
		return strings.ToLower(s)
	}
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		switch {
		case r == 'İ':
			b.WriteString("i\u0307")
		case r == 'Σ' && finalSigma(rs, i):
			b.WriteRune('ς')
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma reports whether rs[i] is preceded by a cased letter and not
// followed by one, skipping case-ignorable characters either way.
func finalSigma(rs []rune, i int) bool {
	before := false
	for j := i - 1; j >= 0; j-- {
		if caseIgnorable(rs[j]) {
			continue
		}
		before = cased(rs[j])
		break
	}
	if !before {
		return false
	}
	for j := i + 1; j < len(rs); j++ {
		if caseIgnorable(rs[j]) {
			continue
		}
		return !cased(rs[j])
	}
	return true
}

func cased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r)
}

func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '^', '`', '\u00b7', '\u2018', '\u2019', '\u2024', '\u2027':
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}
