package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
)

// DefaultChunkBytes is the size above which a result's payload is stored
// in chunks of this size instead of one value. SQLite refuses a value over
// 1,000,000,000 bytes ("string or blob too big"), which a tool can return
// (a dump, an endless log); the round must be stored all the same.
const DefaultChunkBytes = 64 << 20

// The kinds of chunked payload, in result_bodies.chunked: which column the
// joined chunks stand for.
const (
	chunkedText  = "text"  // one plain text part (the text column)
	chunkedParts = "parts" // the parts JSON (the parts column)
)

// chunkedBody is a loaded result whose payload is still in chunks.
type chunkedBody struct {
	k    resultKey
	res  *harness.ToolResult
	kind string
}

// writeChunks stores payload in pieces of at most size bytes. Text is cut
// only at a UTF-8 character boundary, so every piece is valid text when the
// whole is.
func writeChunks(w *txw, convID string, turn, round, seq int, payload string, size int) error {
	for n := 1; payload != ""; n++ {
		end := min(size, len(payload))
		for end < len(payload) && end > 1 && !isRuneStart(payload[end]) {
			end--
		}
		if _, err := w.exec(`INSERT INTO result_chunks (conv_id, turn, round, seq, n, data) VALUES (?, ?, ?, ?, ?, ?)`,
			convID, turn, round, seq, n, []byte(payload[:end])); err != nil {
			return fmt.Errorf("chunk %d: %w", n, err)
		}
		payload = payload[end:]
	}
	return nil
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// readChunks joins the chunks of each body and decodes its payload.
func readChunks(ctx context.Context, tx *sql.Tx, convID string, bodies []chunkedBody) error {
	for _, b := range bodies {
		var sb strings.Builder
		err := query(ctx, tx, `SELECT data FROM result_chunks WHERE conv_id = ? AND turn = ? AND round = ? AND seq = ? ORDER BY n`,
			[]any{convID, b.k.turn, b.k.round, b.k.seq}, func(rows *sql.Rows) error {
				var data sql.RawBytes
				if err := rows.Scan(&data); err != nil {
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
			if b.res.Parts, err = decodeParts(sql.NullString{}, []byte(whole)); err != nil {
				return fmt.Errorf("result %s: payload: %w", b.res.CallID, err)
			}
		default:
			return fmt.Errorf("result %s: unknown chunked payload %q", b.res.CallID, b.kind)
		}
		b.res.Partial = store.Partial(b.res)
	}
	return nil
}
