// Package codec holds how the transcript stores (store/sqlite,
// store/postgres) encode what they keep, so that both keep it the same way:
// parts byte for byte, cut refs, the marker a guard added to a model copy,
// a conversation's title, result metadata, events, and the content hashes
// that store each system prompt, tool schema and tool list once.
//
// Everything here is a pure function of its input; the stores decide only
// where the bytes go.
package codec
