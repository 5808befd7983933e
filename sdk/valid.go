package sdk

// validJSON reports whether b is one valid JSON value (RFC 8259), as
// json.Valid does: the same grammar, the same nesting limit, and, like
// json.Valid, bytes in strings that are not valid UTF-8 are accepted.
//
// It replaces json.Valid on every call's input. encoding/json's scanner
// makes an indirect call per byte, and in the Wasm guest each call is a
// Go function entry the host's interrupt rewrite counts too: json.Valid
// was the largest single part of decoding an envelope (BENCHMARKS.md,
// issue 18). FuzzValidJSON checks that the two agree.
func validJSON(b []byte) bool {
	// open holds the containers entered and not yet closed: '{' or '['.
	var openBuf [32]byte
	open := openBuf[:0]
	i := 0
value:
	i = skipSpace(b, i)
	if i >= len(b) {
		return false
	}
	switch c := b[i]; {
	case c == '{':
		if len(open) == maxNestingDepth {
			return false
		}
		open = append(open, '{')
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			open = open[:len(open)-1]
			i++
			goto after
		}
		goto key
	case c == '[':
		if len(open) == maxNestingDepth {
			return false
		}
		open = append(open, '[')
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			open = open[:len(open)-1]
			i++
			goto after
		}
		goto value
	case c == '"':
		if i = validString(b, i); i < 0 {
			return false
		}
	case c == '-' || c >= '0' && c <= '9':
		if i = validNumber(b, i); i < 0 {
			return false
		}
	case c == 't':
		if i = validLiteral(b, i, "true"); i < 0 {
			return false
		}
	case c == 'f':
		if i = validLiteral(b, i, "false"); i < 0 {
			return false
		}
	case c == 'n':
		if i = validLiteral(b, i, "null"); i < 0 {
			return false
		}
	default:
		return false
	}
after:
	i = skipSpace(b, i)
	if len(open) == 0 {
		return i == len(b)
	}
	if i >= len(b) {
		return false
	}
	switch top := open[len(open)-1]; b[i] {
	case ',':
		i++
		if top == '{' {
			goto key
		}
		goto value
	case '}', ']':
		if b[i] != top+2 { // '{'+2 is '}', '['+2 is ']'
			return false
		}
		open = open[:len(open)-1]
		i++
		goto after
	}
	return false
key:
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != '"' {
		return false
	}
	if i = validString(b, i); i < 0 {
		return false
	}
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return false
	}
	i++
	goto value
}

// maxNestingDepth is encoding/json's limit on nested arrays and objects.
const maxNestingDepth = 10000

// validString returns the index just past the JSON string that starts at
// b[i] (a quote), or -1 if it is not a valid string.
func validString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			i++
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return -1
				}
				for _, h := range b[i+1 : i+5] {
					if !isHex(h) {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// validNumber returns the index just past the JSON number that starts at
// b[i], or -1 if it is not a valid number.
func validNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i+1)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := skipDigits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// validLiteral returns the index just past lit at b[i], or -1 if b does
// not hold lit there.
func validLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}
