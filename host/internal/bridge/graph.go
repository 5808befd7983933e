package bridge

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// node is a subschema and what validating a value against it applies
// next. It mirrors jsonschema-go's validate (v0.4.3, validate.go) as a
// superset: every subschema validate may apply to the value, or to an item
// or a property of it, is an edge here, grouped by what becomes of its
// error.
type node struct {
	// must are applied to the value itself, and their error is the
	// value's: $ref and $dynamicRef targets, allOf, then, else,
	// dependentSchemas and draft 7 dependencies.
	must []*node
	// anyOf are applied to the value, and all their errors are joined
	// into the value's.
	anyOf []*node
	// may are applied to the value, and their errors dropped: oneOf, not,
	// if.
	may []*node

	// positional[i] applies to item i of an array (prefixItems, and items
	// as an array in draft 7); everyItem to every item (items,
	// additionalItems, unevaluatedItems); contains to every item too, its
	// errors dropped.
	positional [][]*node
	everyItem  []*node
	contains   *node

	// props applies to the property of that name; patterns to those whose
	// name matches; additional to those neither matched (nil when absent,
	// or false, which validate checks without applying a subschema);
	// everyValue to every property (unevaluatedProperties); names to every
	// property name (propertyNames).
	props      map[string]*node
	patterns   []pattern
	additional *node
	everyValue []*node
	names      *node
	// scansProps is set when validate ranges over every property of an
	// object (patternProperties, additionalProperties, …).
	scansProps bool
	// listsExtra is set for additionalProperties: false, whose error
	// lists every property it refuses.
	listsExtra bool

	// unique is set for uniqueItems, which hashes every item whole.
	unique bool
	// scansString is set for pattern, minLength and maxLength, whose work
	// grows with a string's length.
	scansString bool
	// printsValue is set when an error of this subschema's own keywords
	// prints the value (type, enum, const, contains, pattern, …).
	printsValue bool
	// work is what validate does on any value apart from subschemas:
	// comparing it with enum and const, looking up required properties.
	work int
	// text is the most bytes an error of this subschema adds besides the
	// value: validate's "validating <where>: " prefix, and the enum,
	// const, required or subschema names it prints.
	text int
}

type pattern struct {
	re *regexp.Regexp
	n  *node
}

// graph builds the nodes of one schema.
type graph struct {
	nodes   map[*jsonschema.Schema]*node
	schemas []*jsonschema.Schema // in the order add met them, for stable errors
	paths   map[*node]string     // JSON Pointers, for errors
	// resources are the subschemas a $ref's non-fragment part may name:
	// the root and every subschema with an $id.
	resources []*jsonschema.Schema
	// anchors maps an anchor name to the subschemas it may name ($anchor,
	// $dynamicAnchor, and draft 7 "$id": "#name").
	anchors map[string][]*node
	fields  map[string]reflect.StructField // jsonschema.Schema fields by JSON name
}

func newGraph(fields map[string]reflect.StructField) *graph {
	return &graph{nodes: map[*jsonschema.Schema]*node{}, paths: map[*node]string{}, anchors: map[string][]*node{}, fields: fields}
}

// schemaFields maps the JSON names of jsonschema.Schema's fields to them,
// as jsonschema-go's JSON Pointers name them.
func schemaFields() map[string]reflect.StructField {
	fields := map[string]reflect.StructField{}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[jsonschema.Schema]()) {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			fields[name] = f
		}
	}
	return fields
}

// buildGraph builds root's nodes and edges, and refuses a cycle of
// subschemas applied to the same value. fields is schemaFields().
func buildGraph(root *jsonschema.Schema, fields map[string]reflect.StructField) (*node, error) {
	g := newGraph(fields)
	g.add(root, "")
	for _, s := range g.schemas {
		if err := g.link(s, g.nodes[s]); err != nil {
			return nil, err
		}
	}
	if err := g.checkCycles(); err != nil {
		return nil, err
	}
	return g.nodes[root], nil
}

// add makes the nodes of s and its subschemas (all of them, $defs
// included, since a $ref may point anywhere) with their structural edges.
// Every field of jsonschema.Schema that holds a subschema is handled
// here: TestGraphHandlesEverySubschemaField checks it.
func (g *graph) add(s *jsonschema.Schema, path string) *node {
	n := &node{}
	g.nodes[s], g.paths[n] = n, path
	g.schemas = append(g.schemas, s)
	if s.ID != "" || path == "" {
		g.resources = append(g.resources, s)
	}
	for _, a := range []string{s.Anchor, s.DynamicAnchor} {
		if a != "" {
			g.anchors[a] = append(g.anchors[a], n)
		}
	}
	if u, err := url.Parse(s.ID); err == nil && u.Fragment != "" {
		g.anchors[u.Fragment] = append(g.anchors[u.Fragment], n)
		g.anchors[strings.TrimPrefix(s.ID, "#")] = append(g.anchors[strings.TrimPrefix(s.ID, "#")], n)
	}
	sub := func(c *jsonschema.Schema, segments ...string) *node {
		if c == nil {
			return nil
		}
		p := path
		for _, seg := range segments {
			p += "/" + pointerSegment(seg)
		}
		return g.add(c, p)
	}
	list := func(to *[]*node, key string, cs []*jsonschema.Schema) {
		for i, c := range cs {
			*to = append(*to, sub(c, key, strconv.Itoa(i)))
		}
	}
	one := func(to *[]*node, key string, c *jsonschema.Schema) {
		if c != nil {
			*to = append(*to, sub(c, key))
		}
	}
	each := func(key string, m map[string]*jsonschema.Schema, f func(name string, c *node)) {
		for _, name := range slices.Sorted(maps.Keys(m)) {
			c := sub(m[name], key, name)
			if f != nil {
				f(name, c)
			}
		}
	}

	// Applied to the value itself.
	list(&n.must, "allOf", s.AllOf)
	one(&n.must, "then", s.Then)
	one(&n.must, "else", s.Else)
	each("dependentSchemas", s.DependentSchemas, func(_ string, c *node) { n.must = append(n.must, c) })
	each("dependencies", s.DependencySchemas, func(_ string, c *node) { n.must = append(n.must, c) })
	list(&n.anyOf, "anyOf", s.AnyOf)
	list(&n.may, "oneOf", s.OneOf)
	one(&n.may, "not", s.Not)
	one(&n.may, "if", s.If)

	// Applied to items.
	positional := func(key string, cs []*jsonschema.Schema) {
		for i, c := range cs {
			for len(n.positional) <= i {
				n.positional = append(n.positional, nil)
			}
			n.positional[i] = append(n.positional[i], sub(c, key, strconv.Itoa(i)))
		}
	}
	positional("prefixItems", s.PrefixItems)
	positional("items", s.ItemsArray)
	one(&n.everyItem, "items", s.Items)
	one(&n.everyItem, "additionalItems", s.AdditionalItems)
	one(&n.everyItem, "unevaluatedItems", s.UnevaluatedItems)
	n.contains = sub(s.Contains, "contains")

	// Applied to properties.
	if len(s.Properties) > 0 {
		n.props = map[string]*node{}
	}
	each("properties", s.Properties, func(name string, c *node) { n.props[name] = c })
	each("patternProperties", s.PatternProperties, func(expr string, c *node) {
		// Resolve compiled it already; it cannot fail here.
		if re, err := regexp.Compile(expr); err == nil {
			n.patterns = append(n.patterns, pattern{re, c})
		}
	})
	if a := s.AdditionalProperties; a != nil {
		// validate checks additionalProperties: false (which decodes as
		// {"not": {}}) without applying it to each property, and lists
		// the properties it refuses.
		c := sub(a, "additionalProperties")
		if a.Not != nil && reflect.ValueOf(*a.Not).IsZero() {
			n.listsExtra = true
		} else {
			n.additional = c
		}
	}
	one(&n.everyValue, "unevaluatedProperties", s.UnevaluatedProperties)
	n.names = sub(s.PropertyNames, "propertyNames")
	n.scansProps = len(s.PatternProperties) > 0 || s.AdditionalProperties != nil || len(n.everyValue) > 0 || n.names != nil

	// Never applied by validate, but a $ref may point into them.
	each("$defs", s.Defs, nil)
	each("definitions", s.Definitions, nil)
	sub(s.ContentSchema, "contentSchema")

	n.unique = s.UniqueItems
	n.scansString = s.Pattern != "" || s.MinLength != nil || s.MaxLength != nil
	n.printsValue = n.scansString || s.Type != "" || len(s.Types) > 0 || s.Enum != nil || s.Const != nil || s.Contains != nil ||
		s.MultipleOf != nil || s.Minimum != nil || s.Maximum != nil || s.ExclusiveMinimum != nil || s.ExclusiveMaximum != nil
	for _, e := range s.Enum {
		n.work += valueSize(e)
		n.text += printedSize(e)
	}
	if s.Const != nil {
		n.work += valueSize(*s.Const)
		n.text += printedSize(*s.Const)
	}
	n.work += len(s.Required)
	for _, r := range append(slices.Clone(s.Required), s.Pattern) {
		n.text += len(r) + 3
	}
	for k, r := range s.DependentRequired {
		n.work += 1 + len(r)
		n.text += len(k) + 3
		for _, x := range r {
			n.text += len(x) + 3
		}
	}
	for k, r := range s.DependencyStrings {
		n.work += 1 + len(r)
		n.text += len(k) + 3
		for _, x := range r {
			n.text += len(x) + 3
		}
	}
	// "validating <$id or path>: ", and the names of subschemas anyOf,
	// oneOf, not and contains print.
	n.text += len("validating : ") + max(len(s.ID), len(path), len("root")) + 64
	for _, c := range slices.Concat(s.AnyOf, s.OneOf, []*jsonschema.Schema{s.Not, s.Contains}) {
		if c != nil {
			n.text += max(len(c.ID), len(c.Anchor)+7, len(c.DynamicAnchor)+7, len("<anonymous schema>")) + 1
		}
	}
	return n
}

// link adds the edges of s's $ref and $dynamicRef.
func (g *graph) link(s *jsonschema.Schema, n *node) error {
	for _, ref := range []struct{ keyword, value string }{{"$ref", s.Ref}, {"$dynamicRef", s.DynamicRef}} {
		if ref.value == "" {
			continue
		}
		targets, err := g.targets(ref.value)
		if err != nil {
			return at(g.paths[n]+"/"+ref.keyword, fmt.Errorf("%s %s at %s: %w", ref.keyword, strconv.QuoteToASCII(ref.value), showPath(g.paths[n]), err))
		}
		n.must = append(n.must, targets...)
	}
	return nil
}

// targets returns every subschema ref may refer to, whichever resource
// its non-fragment part names (jsonschema-go has already refused a ref to
// anything outside the schema), and, for a $dynamicRef, whichever scope
// validation reaches it in. Over-approximating is safe: the edges only
// bound work and find cycles. If none can be found, the schema is refused.
func (g *graph) targets(ref string) ([]*node, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return nil, err
	}
	var out []*node
	if frag := u.Fragment; frag == "" || frag[0] == '/' {
		for _, r := range g.resources {
			if t := g.deref(r, frag); t != nil && !slices.Contains(out, g.nodes[t]) {
				out = append(out, g.nodes[t])
			}
		}
	} else {
		out = append(out, g.anchors[frag]...)
	}
	if len(out) == 0 || slices.Contains(out, nil) {
		return nil, errors.New("cannot tell which subschema it refers to")
	}
	return out, nil
}

// deref follows a JSON Pointer from s through subschemas, as
// jsonschema-go's dereferenceJSONPointer does; nil if it leads nowhere.
func (g *graph) deref(s *jsonschema.Schema, pointer string) *jsonschema.Schema {
	if pointer == "" {
		return s
	}
	if pointer[0] != '/' {
		return nil
	}
	v := reflect.ValueOf(s)
	for _, seg := range strings.Split(pointer[1:], "/") {
		if strings.Contains(seg, "~") {
			seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		}
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return nil
			}
			v = v.Elem()
		}
		switch v.Kind() {
		case reflect.Struct:
			if v.Type() != reflect.TypeFor[jsonschema.Schema]() {
				return nil
			}
			switch seg {
			case "items":
				if items := v.FieldByName("Items"); !items.IsNil() {
					v = items
				} else {
					v = v.FieldByName("ItemsArray")
				}
			case "dependencies":
				v = v.FieldByName("DependencySchemas")
			default:
				f, ok := g.fields[seg]
				if !ok {
					return nil
				}
				v = v.FieldByIndex(f.Index)
			}
		case reflect.Slice:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= v.Len() || (len(seg) > 1 && seg[0] == '0') {
				return nil
			}
			v = v.Index(i)
		case reflect.Map:
			if v.Type().Key().Kind() != reflect.String {
				return nil
			}
			if v = v.MapIndex(reflect.ValueOf(seg)); !v.IsValid() {
				return nil
			}
		default:
			return nil
		}
	}
	if !v.IsValid() || !v.CanInterface() {
		return nil
	}
	t, _ := v.Interface().(*jsonschema.Schema)
	return t
}

// checkCycles refuses a cycle of subschemas applied to the same value
// ($ref to "#", a → b → a, allOf [{$ref "#"}], …): validating anything
// against it would recurse until the stack overflows, which kills the
// process. A cycle through an item or property (a tree of arrays) is
// fine: each step consumes a level of the value, which is finite.
func (g *graph) checkCycles() error {
	const (
		unseen = iota
		open
		done
	)
	state := map[*node]int{}
	var stack []*node
	var visit func(n *node) error
	visit = func(n *node) error {
		state[n] = open
		stack = append(stack, n)
		for _, c := range slices.Concat(n.must, n.anyOf, n.may) {
			switch state[c] {
			case open:
				return at(g.paths[c], fmt.Errorf("has a cycle of references that consumes nothing of the value (validation would never end): %s",
					g.showCycle(append(stack[slices.Index(stack, c):], c))))
			case unseen:
				if err := visit(c); err != nil {
					return err
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		return nil
	}
	// Every node, not only those reachable from the root through in-place
	// edges: a cycle may hang below a property.
	for _, s := range g.schemas {
		if n := g.nodes[s]; state[n] == unseen {
			if err := visit(n); err != nil {
				return err
			}
		}
	}
	return nil
}

// showCycle names the subschemas of a cycle by their JSON Pointers, e.g.
// "#/$defs/a" -> "#/$defs/b" -> "#/$defs/a".
func (g *graph) showCycle(cycle []*node) string {
	const most = 8
	var names []string
	for i, n := range cycle {
		if i == most && len(cycle) > most+1 {
			names = append(names, fmt.Sprintf("… (%d more)", len(cycle)-most-1))
			n = cycle[len(cycle)-1]
		} else if i > most {
			continue
		}
		p := "#" + g.paths[n]
		if len(p) > maxShownPath {
			p = p[:maxShownPath] + "…"
		}
		names = append(names, strconv.QuoteToASCII(p))
	}
	return strings.Join(names, " -> ")
}
