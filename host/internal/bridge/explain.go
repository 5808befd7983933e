package bridge

import (
	"regexp"
	"strings"
)

// plainValidationError rewrites a jsonschema-go validation error for the
// client (and the model) that sent the value: it names the member at fault
// as noun ("argument", "property") by its path in the value instead of the
// schema's ("validating root: validating /properties/a: …"), prints null as
// null (jsonschema-go prints "<invalid reflect.Value>" for it) and numbers
// as numbers ("1/1", "3.000000"). It keeps each line (anyOf lists one per
// branch) and every fact of the original.
func plainValidationError(msg, noun string) string {
	lines := strings.Split(msg, "\n")
	for i, l := range lines {
		lines[i] = plainLine(l, noun)
	}
	return strings.Join(lines, "\n")
}

func plainLine(l, noun string) string {
	rest := strings.TrimLeft(l, " \t")
	indent := l[:len(l)-len(rest)]
	where := ""
	for strings.HasPrefix(rest, "validating ") {
		end := strings.Index(rest, ": ")
		if end < 0 {
			break
		}
		where, rest = rest[len("validating "):end], rest[end+2:]
	}
	rest = strings.ReplaceAll(rest, "<invalid reflect.Value>", "null")
	rest = plainNumbers(rest)
	rest = strings.TrimPrefix(rest, "type: ")
	member, schemaRest := memberPath(where)
	if member == "" {
		// The value itself: its members are the nouns.
		if names, ok := strings.CutPrefix(rest, "required: missing properties: "); ok {
			rest = "missing required " + noun + "s: " + names
		} else if names, ok := strings.CutPrefix(rest, "unexpected additional properties "); ok {
			rest = "unexpected " + noun + "s: " + names
		}
	} else {
		rest = noun + " " + quoteValue(member) + ": " + rest
	}
	if schemaRest != "" {
		rest += " (schema at " + schemaRest + ")"
	}
	return indent + rest
}

// memberPath turns a schema location ("root", "/properties/a/properties/b",
// "/properties/a/anyOf/0") into the path of the value's member it checks
// ("a.b"; "" for the value itself) and what of the location is not a
// member's ("/anyOf/0"; "" when none is left).
func memberPath(where string) (member, schemaRest string) {
	if where == "" || where == "root" || !strings.HasPrefix(where, "/") {
		return "", ""
	}
	segs := strings.Split(where[1:], "/")
	var names []string
	i := 0
	for ; i+1 < len(segs) && segs[i] == "properties"; i += 2 {
		names = append(names, strings.ReplaceAll(strings.ReplaceAll(segs[i+1], "~1", "/"), "~0", "~"))
	}
	if i < len(segs) {
		schemaRest = "/" + strings.Join(segs[i:], "/")
	}
	return strings.Join(names, "."), schemaRest
}

var (
	// ratInt is an integer printed as a big.Rat ("1/1").
	ratInt = regexp.MustCompile(`\b(-?\d+)/1\b`)
	// fixed is a number printed with %f ("3.000000", "0.500000").
	fixed = regexp.MustCompile(`\b(\d+)\.(\d{6})\b`)
)

func plainNumbers(s string) string {
	s = ratInt.ReplaceAllString(s, "$1")
	return fixed.ReplaceAllStringFunc(s, func(n string) string {
		n = strings.TrimRight(n, "0")
		return strings.TrimSuffix(n, ".")
	})
}
