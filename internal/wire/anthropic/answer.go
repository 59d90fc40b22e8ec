package anthropic

// Response is a whole (non-streamed) answer: its content blocks and usage.
type Response struct {
	Content []Block `json:"content"`
	Usage   *Usage  `json:"usage"`
}

// StreamEvent is one event of a streamed answer: message_start (the
// message's input usage), content_block_start (a block, by index),
// content_block_delta (text or a piece of a tool_use's input JSON),
// message_delta (the output usage so far).
type StreamEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		Usage *Usage `json:"usage"`
	} `json:"message"`
	Usage        *Usage      `json:"usage"`
	ContentBlock *BlockStart `json:"content_block"`
	Delta        *Delta      `json:"delta"`
}

// BlockStart is the block a content_block_start opens: its type, a
// tool_use's id and name, a text block's first text. A tool_use's input
// comes in the deltas (the start's is empty), so it is not read.
type BlockStart struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Name string `json:"name"`
	Text string `json:"text"`
}

// Delta is a content_block_delta's piece: text_delta's text or
// input_json_delta's partial JSON.
type Delta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	PartialJSON string `json:"partial_json"`
}
