package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store/internal/codec"
	"github.com/agentharness/harness/store/internal/rows"
)

// defaultChunkBytes is the size above which a result's payload is stored
// in chunks of this size instead of one value. SQLite refuses a value over
// 1,000,000,000 bytes ("string or blob too big"), which a tool can return
// (a dump, an endless log); the round must be stored all the same.
const defaultChunkBytes = 64 << 20

// The kinds of chunked payload, in result_bodies.chunked: which column the
// joined chunks stand for.
const (
	chunkedText  = "text"  // one plain text part (the text column)
	chunkedParts = "parts" // the parts JSON (the parts column)
)

// chunkedBody is a loaded result whose payload is still in chunks.
type chunkedBody struct {
	k    rows.Key
	res  *harness.ToolResult
	kind string
}

// writeChunks stores payload in pieces of at most size bytes.
func writeChunks(w *txw, convID string, turn, round, seq int, payload string, size int) error {
	for i, piece := range splitChunks(payload, size) {
		if _, err := w.exec(`INSERT INTO result_chunks (conv_id, turn, round, seq, n, data) VALUES (?, ?, ?, ?, ?, ?)`,
			convID, turn, round, seq, i+1, []byte(piece)); err != nil {
			return fmt.Errorf("chunk %d: %w", i+1, err)
		}
	}
	return nil
}

// splitChunks cuts s into pieces of at most size bytes (size ≥ 4) that
// join back to s. A cut falls on a UTF-8 character boundary when one lies
// within the last 3 bytes of a piece, so every piece of valid text is valid
// text. The pieces share s's memory.
func splitChunks(s string, size int) []string {
	size = max(size, utf8.UTFMax)
	var out []string
	for s != "" {
		end := min(size, len(s))
		for back := 0; end < len(s) && back < utf8.UTFMax-1 && !utf8.RuneStart(s[end]); back++ {
			end--
		}
		if end < len(s) && !utf8.RuneStart(s[end]) {
			end = min(size, len(s)) // not text: cut anywhere
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

// readChunks joins the chunks of each body and decodes its payload.
func readChunks(ctx context.Context, tx *sql.Tx, convID string, bodies []chunkedBody) error {
	for _, b := range bodies {
		var sb strings.Builder
		err := query(ctx, tx, `SELECT data FROM result_chunks WHERE conv_id = ? AND turn = ? AND round = ? AND seq = ? ORDER BY n`,
			[]any{convID, b.k.Turn, b.k.Round, b.k.Seq}, func(sc rows.Scanner) error {
				var data sql.RawBytes
				if err := sc.Scan(&data); err != nil {
					return err
				}
				sb.Write(data)
				return nil
			})
		if err != nil {
			return fmt.Errorf("result %s: chunks: %w", b.res.CallID, err)
		}
		whole := sb.String()
		switch b.kind {
		case chunkedText:
			b.res.Parts = []harness.Part{harness.TextPart(whole)}
		case chunkedParts:
			if b.res.Parts, err = codec.DecodeParts("", false, []byte(whole)); err != nil {
				return fmt.Errorf("result %s: payload: %w", b.res.CallID, err)
			}
		default:
			return fmt.Errorf("result %s: unknown chunked payload %q", b.res.CallID, b.kind)
		}
		b.res.Partial = false // the payload is read whole now
	}
	return nil
}
