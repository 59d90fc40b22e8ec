package tokens

import (
	"fmt"
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// bpe is a byte-pair-encoding counter over one tiktoken vocabulary. It is
// safe for concurrent use: the vocabulary is read-only and the codec's
// regexp2 splitter keeps a pool of runners, so one bpe can be shared by
// every goroutine of a process. Building one compiles the split regexp and,
// the first time in a process, the vocabulary map (about 200k entries), so
// construct it once (see [O200k]) rather than per call.
type bpe struct {
	codec tokenizer.Codec
	// delStandIn is set when the codec's splitter never matches DEL
	// (U+007F) and so drops it from the count; see [standIn].
	delStandIn bool
}

// standIn replaces DEL before counting when the codec loses it. The
// codec's generated splitter leaves DEL out of its ASCII bitmaps for
// [^\s\p{L}\p{N}], so "\x7f" counted 0 tokens and "\x7f.get" 2 (tiktoken:
// 1 and 3). STX (U+0002) is the same kind of character for every split
// pattern of the tiktoken encodings (a control character: not a space,
// letter, digit, line break, slash or quote), the generated bitmaps do
// include it, and, like DEL, it is a token of its own in o200k_base,
// cl100k_base, p50k_base and r50k_base that no other token contains, so
// BPE never merges either with a neighbour: swapping one for the other
// keeps every count.
const standIn = "\x02"

// newBPE returns a counter for a tiktoken encoding, for example
// tokenizer.O200kBase or tokenizer.Cl100kBase.
func newBPE(enc tokenizer.Encoding) (*bpe, error) {
	c, err := tokenizer.Get(enc)
	if err != nil {
		return nil, fmt.Errorf("tokens: encoding %q: %w", enc, err)
	}
	// Invalid UTF-8 is replaced by U+FFFD before splitting, as tiktoken
	// does by default; the mode is set before the codec is shared, so no
	// goroutine ever sees it change.
	c.SetErrorMode(tokenizer.ErrorModeReplace)
	b := &bpe{codec: c}
	if n, err := c.Count("\x7f"); err == nil && n == 0 {
		b.delStandIn = true
	}
	return b, nil
}

var (
	o200kOnce sync.Once
	o200k     *bpe
	o200kErr  error
)

// O200k returns the process-wide o200k_base counter (the encoding of
// gpt-4o, gpt-4.1, gpt-5 and the o-series), building it on first use. The
// counter is immutable once built and safe for concurrent use, so sharing
// it is safe. Building it compiles the split regexp and the vocabulary map
// (about 200k entries), so it is done once per process.
func O200k() (Counter, error) {
	o200kOnce.Do(func() { o200k, o200kErr = newBPE(tokenizer.O200kBase) })
	if o200kErr != nil {
		return nil, o200kErr
	}
	return o200k, nil
}

// name is the encoding's name, such as "o200k_base".
func (b *bpe) name() string { return b.codec.GetName() }

// Count returns the number of BPE tokens of text. Special-token text such
// as "<|endoftext|>" is counted as ordinary text, as it would be when sent
// inside a message.
//
// Long texts are counted in chunks of about chunkBytes, cut only where
// no piece of the split regexp crosses: after a line break ('\n' or '\r')
// followed by a character other than '\r', '\n' or '/'. (The pieces that
// contain line breaks are whitespace runs and punctuation followed by
// [\r\n/]*, and with this codec's splitter neither continues past a line
// break onto a character of another kind.) The count is identical to
// counting the whole text — FuzzO200kChunking checks it, and a million
// random mixes of line breaks, spaces, letters, digits and punctuation
// agreed — while the work stays linear: the codec's regexp2 splitter
// rescans the rest of a whitespace run for every piece, which is
// quadratic on text such as many indented blank lines (40 KB of
// " \t \n" took 0.8 s whole, 64 KB of "\r \r " 6.5 s).
//
// Known difference: on whitespace runs holding several line breaks
// separated by spaces ("  \n  \n  ") this codec splits at every line
// break where tiktoken keeps one piece, so it may count a token or two
// more there; the [Calibrator] absorbs such differences.
//
// The codec fails only if its regexp engine times out, which it does not
// with the default (unbounded) timeout; should it ever fail, Count counts
// that chunk as its byte length, a strict upper bound (every BPE token
// covers at least one byte), so a budget computed from it errs on the
// safe side.
func (b *bpe) Count(text string) int { return b.countChunked(text, chunkBytes) }

// chunkBytes is the size from which [bpe.Count] looks for a place to cut
// a long text.
const chunkBytes = 1024

func (b *bpe) countChunked(text string, size int) int {
	n := 0
	for len(text) > 0 {
		cut := len(text)
		if cut > size {
			cut = chunkEnd(text, size)
		}
		n += b.countChunk(text[:cut])
		text = text[cut:]
	}
	return n
}

// chunkEnd returns the first safe cut at or after from, or len(s).
func chunkEnd(s string, from int) int {
	for p := max(from, 1); p < len(s); p++ {
		if s[p-1] != '\n' && s[p-1] != '\r' {
			continue
		}
		switch s[p] {
		case '\n', '\r', '/':
		default:
			return p
		}
	}
	return len(s)
}

func (b *bpe) countChunk(text string) int {
	if b.delStandIn && strings.IndexByte(text, 0x7f) >= 0 {
		text = strings.ReplaceAll(text, "\x7f", standIn)
	}
	n, err := b.codec.Count(text)
	if err != nil {
		return len(text)
	}
	return n
}
