package promptunit

// Fixed overheads of the chat wire formats, in tokens. Providers wrap each
// message in framing tokens the text does not contain; these figures are
// those of OpenAI's chat format (3 framing tokens per message plus one for
// the role, 3 to prime the reply) and are close for the others. What they
// miss for a given provider tokens.Calibrator learns.
const (
	// MessageOverhead is added once per message: framing and role.
	MessageOverhead = 4
	// RequestOverhead is added once per request: the tokens that prime
	// the assistant's reply.
	RequestOverhead = 3
)
