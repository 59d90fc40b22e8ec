// Package gemini holds the Gemini API's wire structs that both the proxy
// (reading answers) and the importers (reading Gemini CLI's Content lists
// and session files) decode: a Content and its parts, and an answer's
// candidates and usage. Fields either side does not read are left out.
package gemini

import "encoding/json"

// Content is one message of a conversation: a role ("user" or "model")
// and its parts.
type Content struct {
	Role  string `json:"role"`
	Parts []Part `json:"parts"`
}

// Part is one part of a Content: text (the model's reasoning when Thought
// is set), a function call or a function response.
type Part struct {
	Text             string            `json:"text"`
	Thought          bool              `json:"thought"`
	FunctionCall     *FunctionCall     `json:"functionCall"`
	FunctionResponse *FunctionResponse `json:"functionResponse"`
}

// FunctionCall is a tool call: its id (empty in answers of API versions
// that match calls by name), the tool's name and its arguments.
type FunctionCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// FunctionResponse answers the FunctionCall of its id (or name).
type FunctionResponse struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// Response is an answer of generateContent, or one chunk of
// streamGenerateContent's: the candidates' contents and the usage (the
// last chunk's holds the totals).
type Response struct {
	Candidates []Candidate `json:"candidates"`
	Usage      *Usage      `json:"usageMetadata"`
}

// Candidate is one candidate answer.
type Candidate struct {
	Content Content `json:"content"`
}

// Usage counts an answer's tokens: the prompt (cached ones included), the
// cached part of it, the answer and the reasoning.
type Usage struct {
	Prompt     int `json:"promptTokenCount"`
	Cached     int `json:"cachedContentTokenCount"`
	Candidates int `json:"candidatesTokenCount"`
	Thoughts   int `json:"thoughtsTokenCount"`
}
