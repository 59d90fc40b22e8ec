package spill

import (
	"context"
	"io"
)

// Entry names what a [Store] is asked to save: whose it is, what produced
// it and what kind of content it is. Stores derive file names from it; the
// values are sanitised, so they may hold anything.
type Entry struct {
	// Conversation owns the content; each conversation gets its own folder.
	Conversation string
	// CallID is the tool call that produced the content.
	CallID string
	// Tool is the name of the tool that produced it.
	Tool string
	// Ext is the kind of content, without the dot: "txt" for raw text,
	// "json" for a JSON document.
	Ext string
}

// Saved says where a [Store] put content and how to read it back.
type Saved struct {
	// Locator is where the content is: for [Dir], the file's path relative
	// to the workspace, with forward slashes, as the workspace file tools
	// take it.
	Locator string
	// Bytes is the number of bytes saved.
	Bytes int64
	// Hint tells a model how to read the content back, in one sentence.
	Hint string
}

// Store saves content that a guard did not show the model in full.
//
// Save reads content to its end and returns where it is. On error nothing
// is left behind (no partial file); content may have been partly read, and
// the caller decides what to do with the rest. Implementations must be safe
// for concurrent use, and must never overwrite earlier content: two saves
// with the same Entry get two locators.
type Store interface {
	Save(ctx context.Context, e Entry, content io.Reader) (Saved, error)
}
