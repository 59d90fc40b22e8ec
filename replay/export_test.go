package replay

// What the external tests (package replay_test, which import the replay
// engine and so cannot be in package replay) use of the package's own.
var (
	FormatStore      = formatStore
	ParseStore       = parseStore
	ParseStoreWarn   = parseStoreWarn
	FromConversation = fromConversation
	ApplyRequests    = applyRequests
	SameSpec         = sameSpec
)
