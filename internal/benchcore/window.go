package benchcore

import (
	"strings"

	"github.com/agentharness/harness/provider/catalog"
)

// lookupWindow finds model's context window in catalog.DefaultWindows,
// also without a provider prefix ("deepseek/deepseek-chat").
func lookupWindow(model string) (int, bool) {
	if model == "" {
		return 0, false
	}
	ws := catalog.DefaultWindows()
	for _, m := range []string{model, model[strings.LastIndex(model, "/")+1:]} {
		if w, ok := ws.Lookup(m); ok {
			return w, true
		}
	}
	return 0, false
}
