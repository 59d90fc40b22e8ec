// Package rows is the reading side the transcript stores (store/sqlite,
// store/postgres) share: what each query selects, how one row is scanned
// into harness values whichever the driver, and how the rows of a
// conversation are assembled, table by table, into one.
//
// A store keeps its SQL (its FROM, WHERE and placeholders) and its driver
// calls; the columns it selects are the constants here, in the order the
// readers scan them. Destinations are ones both database/sql (SQLite's
// TEXT, INTEGER and BLOB) and pgx (PostgreSQL's bytea, boolean and bigint)
// fill: Str and NullStr read a text or bytea column byte for byte, and a
// boolean is scanned into a bool (SQLite's 0 and 1 convert).
package rows
