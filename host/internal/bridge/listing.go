package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
)

// DefaultMaxItems is how many items of each kind a plugin may list when
// Limits does not say.
const DefaultMaxItems = 1000

// Limits bound what one plugin may list.
type Limits struct {
	// MaxItems caps how many tools, prompts, resources and resource
	// templates (each) the plugin may list; the items past it are left out.
	// 0 means DefaultMaxItems.
	MaxItems int
	// Deferred leaves the meta-schema check and the resolution of each
	// tool's schemas to the tool's first call: for lists this build has
	// checked whole before (a cached description, whose outputs the
	// plugin's first activation proves unchanged). Everything else is
	// checked at once, and the size and nesting of every schema too.
	Deferred bool
}

func (l Limits) maxItems() int {
	if l.MaxItems <= 0 {
		return DefaultMaxItems
	}
	return l.MaxItems
}

// listItems calls a list export and returns the raw items of its list
// (what get picks out of R), each to be checked on its own: a bad item is
// left out, not the whole plugin (the host leaves out the whole plugin
// only for a hostile fault, see Refusal.Hostile). The items past lim are
// left out at once, with one refusal saying how many. err is for an output
// that is no list at all.
func listItems[R any](ctx context.Context, p Caller, export, kind string, lim Limits, get func(*R) []json.RawMessage) (items []json.RawMessage, refused []Refusal, err error) {
	res, err := list[R](ctx, p, export)
	if err != nil {
		return nil, nil, err
	}
	items = get(res)
	if n, most := len(items), lim.maxItems(); n > most {
		refused = append(refused, Refusal{Export: export, Kind: kind, Err: fmt.Errorf("%d %ss listed, more than max_items = %d: the first %d kept, the other %d left out (#%d to #%d)",
			n, kind, most, most, n-most, most+1, n)})
		items = items[:most]
	}
	return items, refused, nil
}

// itemKey is what names an item in errors, read on its own so that an
// item refused before it is decoded can still be named.
type itemKey struct {
	Name        string `json:"name"`
	URI         string `json:"uri"`
	URITemplate string `json:"uriTemplate"`
}

// decodeItem decodes one raw item into v after checking its shape, and
// refuses it if any string in it hides text (see checkText). It returns
// the item's key whatever happens.
func decodeItem(raw json.RawMessage, v any) (key itemKey, err error) {
	defer func() {
		if err != nil {
			_ = json.Unmarshal(raw, &key) // best effort: only to name the item
		}
	}()
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return key, fmt.Errorf("is null")
	}
	if _, err := scanJSON(raw, maxNesting); err != nil {
		return key, err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return key, at(unmarshalPointer(err), fmt.Errorf("invalid: %w", err))
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return key, fmt.Errorf("invalid: %w", err)
	}
	return key, checkText(doc)
}
