package catalog

// Public base URLs of the providers' model APIs, the way their own SDKs
// and CLIs default them: the path a request names is appended (OpenAI's
// includes the /v1 its request paths leave out).
const (
	AnthropicEndpoint = "https://api.anthropic.com"
	OpenAIEndpoint    = "https://api.openai.com/v1"
	GeminiEndpoint    = "https://generativelanguage.googleapis.com"
)
