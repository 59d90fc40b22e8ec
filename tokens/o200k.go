package tokens

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// bpe is a byte-pair-encoding counter over one tiktoken vocabulary. It is
// safe for concurrent use: the vocabulary is read-only and the codec's
// regexp2 splitter keeps a pool of runners, so one bpe can be shared by
// every goroutine of a process. Building one compiles the split regexp and
// reads the vocabulary (about 200k entries), so construct it once (see
// [O200k]) rather than per call.
type bpe struct {
	codec tokenizer.Codec
	// delStandIn is set when the codec's splitter never matches DEL
	// (U+007F) and so drops it from the count; see [standIn].
	delStandIn bool
	// ranks, when set, is the vocabulary of o200k_base: Count then splits
	// with [pieceEnd] and merges itself, and the codec only counts text
	// that is not valid UTF-8.
	ranks ranks
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
	if enc == tokenizer.O200kBase {
		if b.ranks, err = vocabularyOf(enc); err != nil {
			return nil, err
		}
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
// Valid UTF-8 is split by [pieceEnd], which implements o200k_base's split
// pattern as a backtracking engine (tiktoken's) runs it, and each piece is
// merged by the vocabulary's ranks, allocating nothing: linear in the text,
// an order of magnitude faster than the codec, whose regexp2 splitter
// allocates a match per piece and rescans whitespace runs. Where the
// codec's generated splitter leaves the pattern (it cuts a whitespace run
// such as "  \n  \n" after each line break) Count follows the pattern.
//
// Other text (and every encoding but o200k_base) is counted by the codec,
// invalid bytes replaced by U+FFFD as tiktoken does, in chunks of about
// chunkBytes cut only where no piece of the split regexp crosses: after a
// line break ('\n' or '\r') followed by a character other than '\r',
// '\n' or '/' (FuzzO200kChunking checks the count is the whole text's),
// which keeps the codec's rescans linear. Should the codec fail, a chunk
// counts as its byte length, a strict upper bound.
func (b *bpe) Count(text string) int {
	if b.ranks != nil && utf8.ValidString(text) {
		return b.countSplit(text)
	}
	return b.countChunked(text, chunkBytes)
}

// countSplit counts valid UTF-8 with the hand-written splitter and the
// vocabulary's ranks: the count of the codec's (and tiktoken's) split of
// the whole text, without its allocations per piece.
func (b *bpe) countSplit(text string) int {
	n := 0
	for i := 0; i < len(text); {
		end := pieceEnd(text, i)
		n += b.ranks.count(text[i:end])
		i = end
	}
	return n
}

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
