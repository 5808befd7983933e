package bridge

import (
	"fmt"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// confusableScripts are the scripts whose letters pass for each other's:
// UTS #39 allows none of them mixed with Latin even at its "moderately
// restrictive" level.
var confusableScripts = []struct {
	name  string
	table *unicode.RangeTable
}{
	{"Latin", unicode.Latin},
	{"Greek", unicode.Greek},
	{"Cyrillic", unicode.Cyrillic},
	{"Armenian", unicode.Armenian},
	{"Cherokee", unicode.Cherokee},
}

// latinLookAlikes maps the Greek, Cyrillic, Armenian and Cherokee letters
// that look like a Latin letter, in common fonts, to that letter (after
// Unicode's confusables.txt, the letters that matter for names).
var latinLookAlikes = map[rune]rune{
	// Cyrillic
	'А': 'A', 'В': 'B', 'Е': 'E', 'Ѕ': 'S', 'І': 'I', 'Ј': 'J', 'К': 'K', 'М': 'M', 'Н': 'H',
	'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T', 'Х': 'X', 'У': 'Y', 'Ү': 'Y', 'Ԛ': 'Q', 'Ԝ': 'W',
	'а': 'a', 'е': 'e', 'ѕ': 's', 'і': 'i', 'ј': 'j', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y',
	'х': 'x', 'һ': 'h', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'ү': 'y', 'ӏ': 'l',
	// Greek
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N',
	'Ο': 'O', 'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X',
	'α': 'a', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'υ': 'u',
	// Armenian
	'Օ': 'O', 'Ս': 'U', 'Տ': 'S', 'օ': 'o', 'ս': 'u', 'ց': 'g', 'հ': 'h', 'ո': 'n', 'զ': 'q',
	// Cherokee
	'Ꭺ': 'A', 'Ᏼ': 'B', 'Ꮯ': 'C', 'Ꭼ': 'E', 'Ꮐ': 'G', 'Ꮋ': 'H', 'Ꭻ': 'J', 'Ꮶ': 'K', 'Ꮮ': 'L',
	'Ꮇ': 'M', 'Ꮲ': 'P', 'Ꮪ': 'S', 'Ꭲ': 'T', 'Ꮩ': 'V', 'Ꮃ': 'W', 'Ꮓ': 'Z',
}

// lookAlike refuses a name made to pass for another, as UTS #39 detects
// confusable identifiers (simplified to what a plugin's names need):
//
//   - a compatibility form of ASCII letters or digits: a character that is
//     not ASCII but whose NFKC form is (fullwidth "ｒｅａｄ", mathematical
//     "𝐫𝐞𝐚𝐝", the ligature "ﬁ", the Kelvin sign);
//   - letters of two of Latin, Greek, Cyrillic, Armenian and Cherokee
//     (a mixed-script confusable: "rеad" with a Cyrillic е);
//   - only letters of one of Greek, Cyrillic, Armenian or Cherokee that
//     each look like a Latin letter (a whole-script confusable: "сор" in
//     Cyrillic passes for "cop").
//
// Such a name is hostile (IsHostile): no plugin offers one by mistake. A
// name in one script, Latin or not ("天気", "Отчёт"), is not refused here.
func lookAlike(name string) error {
	var scripts []string
	letters, alike := 0, 0
	last := -1 // index in confusableScripts of the last letter's script
	for i, r := range name {
		if r < 0x80 {
			if ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') {
				letters++
				last = 0
				if scripts = addScript(scripts, "Latin"); len(scripts) > 1 {
					return mixedScripts(scripts, r, i)
				}
			}
			continue
		}
		// Its compatibility decomposition, read in place (no allocation: a
		// name may be 64 KiB).
		if nf := norm.NFKC.PropertiesString(name[i:]).Decomposition(); asciiAlphanumeric(nf) {
			return &hostile{fmt.Errorf("is a look-alike: %U at byte %d is a compatibility form of %q", r, i, nf)}
		}
		if !unicode.IsLetter(r) {
			continue
		}
		letters++
		// Most names keep to one script: try the last letter's first.
		if last < 0 || !unicode.Is(confusableScripts[last].table, r) {
			last = -1
			for j, s := range confusableScripts {
				if unicode.Is(s.table, r) {
					last = j
					break
				}
			}
		}
		if last >= 0 {
			if scripts = addScript(scripts, confusableScripts[last].name); len(scripts) > 1 {
				return mixedScripts(scripts, r, i)
			}
		}
		if alike == letters-1 {
			if _, ok := latinLookAlikes[r]; ok {
				alike++
			}
		}
	}
	if letters > 0 && alike == letters {
		skeleton := []rune(name)
		for i, r := range skeleton {
			if l, ok := latinLookAlikes[r]; ok {
				skeleton[i] = l
			}
		}
		return &hostile{fmt.Errorf("is a look-alike: spelled only with %s letters that look like Latin ones, it passes for %q", scripts[0], string(skeleton))}
	}
	return nil
}

// mixedScripts is the error for a name whose letter r, at byte i, is of
// another script than the letters before it.
func mixedScripts(scripts []string, r rune, i int) error {
	return &hostile{fmt.Errorf("is a look-alike: it mixes %s and %s letters (%U at byte %d)", scripts[0], scripts[1], r, i)}
}

// addScript adds name to scripts unless it is there.
func addScript(scripts []string, name string) []string {
	for _, s := range scripts {
		if s == name {
			return scripts
		}
	}
	return append(scripts, name)
}

// asciiAlphanumeric reports whether s is one or more ASCII letters or
// digits.
func asciiAlphanumeric(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
