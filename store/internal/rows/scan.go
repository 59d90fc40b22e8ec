package rows

import (
	"errors"
	"fmt"
)

// Scanner reads the columns of one row into dest, in order: *sql.Rows and
// pgx.Rows both are one.
type Scanner interface {
	Scan(dest ...any) error
}

// Str scans a text or bytea column into *P byte for byte; NULL reads as
// "". It is a database/sql Scanner and a pgx BytesScanner: PostgreSQL
// keeps every string a model or tool wrote as bytea, which pgx does not
// scan into a string.
type Str struct{ P *string }

// Scan implements database/sql's Scanner.
func (s Str) Scan(src any) error {
	_, err := scanText(s.P, src)
	return err
}

// ScanBytes implements pgx's BytesScanner; v is nil for NULL.
func (s Str) ScanBytes(v []byte) error {
	*s.P = string(v)
	return nil
}

// NullStr is Str that also reports, in *Valid, whether the column was not
// NULL: how a store tells a text payload ("" included) from none.
type NullStr struct {
	P     *string
	Valid *bool
}

// Scan implements database/sql's Scanner.
func (s NullStr) Scan(src any) error {
	valid, err := scanText(s.P, src)
	*s.Valid = valid
	return err
}

// ScanBytes implements pgx's BytesScanner; v is nil for NULL.
func (s NullStr) ScanBytes(v []byte) error {
	*s.P, *s.Valid = string(v), v != nil
	return nil
}

// scanText sets *p from a database/sql value and reports whether it was
// not NULL.
func scanText(p *string, src any) (bool, error) {
	switch v := src.(type) {
	case nil:
		*p = ""
		return false, nil
	case string:
		*p = v
	case []byte:
		*p = string(v)
	default:
		return false, fmt.Errorf("rows: a %T where text was expected", src)
	}
	return true, nil
}

// Key names a stored result: its turn, round and position in the round
// (from 1).
type Key struct{ Turn, Round, Seq int }

// Query runs one SELECT with args and calls row for each row it returns,
// in order; the first error stops it.
type Query func(sql string, args []any, row func(Scanner) error) error

// Step is one query of a read made of several: what it reads (named in
// its error), its SQL and arguments, and what each row does.
type Step struct {
	What string
	SQL  string
	Args []any
	Row  func(Scanner) error
}

// Run runs steps in order with q. The first error stops it, prefixed by
// its step's What.
func Run(q Query, steps ...Step) error {
	for _, s := range steps {
		if s.Row == nil {
			return errors.New("rows: a step without a row function")
		}
		if err := q(s.SQL, s.Args, s.Row); err != nil {
			return fmt.Errorf("%s: %w", s.What, err)
		}
	}
	return nil
}
