// Package clearnote holds what a request tells the model when compaction
// has cleared old tool results and no summary stands in for them: the
// engine's view shows [Text] where a summary would go, and the compaction
// policy shows the same text in the request it clears, and gives it to its
// summariser, so the three agree to the byte.
package clearnote

// Text tells the model why some results are one-line placeholders and how
// to get them back.
const Text = "Note: to save context, the results of some earlier tool calls are shown as one-line placeholders. " +
	"Each placeholder says how to get the full result back if you need it."
