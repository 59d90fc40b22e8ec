package sqlite

import (
	"database/sql"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store/internal/codec"
)

// The refs column of cuts (schema v5) keeps harness.Cut.Refs, encoded by
// codec.EncodeRefs: NULL for nil, else a JSON array of the call ids, which
// SQLite's json_each reads.

// cutColumns are the columns of a stored cut, in the order scanCut reads
// them.
const cutColumns = "kind, by, bytes_in, bytes_out, locator, of, refs"

// scanCut reads one row whose first columns are scanned into keys and
// whose last are cutColumns.
func scanCut(rows *sql.Rows, keys ...any) (harness.Cut, error) {
	var (
		c    harness.Cut
		refs sql.NullString
	)
	if err := rows.Scan(append(keys, &c.Kind, &c.By, &c.BytesIn, &c.BytesOut, &c.Locator, &c.Of, &refs)...); err != nil {
		return c, err
	}
	var err error
	c.Refs, err = codec.DecodeRefs(refs.String, refs.Valid)
	return c, err
}
