package benchcore

import (
	"strings"

	"github.com/agentharness/harness/tokens"
)

// lookupWindow finds model's context window in tokens.DefaultWindows,
// also without a provider prefix ("deepseek/deepseek-chat").
func lookupWindow(model string) (int, bool) {
	if model == "" {
		return 0, false
	}
	ws := tokens.DefaultWindows()
	for _, m := range []string{model, model[strings.LastIndex(model, "/")+1:]} {
		if w, ok := ws.Lookup(m); ok {
			return w, true
		}
	}
	return 0, false
}
