// Package toolschema is a tool's schema as a model is sent it: its size
// ([Bytes]), which the request figures, the tool selector, the stores and
// the audit all count the same way, and the note that hands the model a
// tool's full input schema in an argument error ([Note]), which the engine
// and the proxy's deferred tools word the same way.
package toolschema
