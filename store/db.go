package store

// DB is a transcript store on a database, as store/sqlite and
// store/postgres open it: a Store whose turns another process may resume
// (TurnResumer), with the proxy's claim log (Claimer) and savings
// (SavingsLog). Code that takes a store should ask for the smallest of
// these interfaces it uses; DB is what the drivers' Open returns, so that
// one variable holds either database.
type DB interface {
	Store
	TurnResumer
	Claimer
	SavingsLog

	// Path names the database in messages: an SQLite file's path, a
	// PostgreSQL address without its password.
	Path() string
	// EventErr returns the first error met while storing an event
	// (Observe cannot fail), or nil.
	EventErr() error
}
